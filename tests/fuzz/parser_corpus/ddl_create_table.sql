CREATE TABLE IF NOT EXISTS lineitem (
    l_orderkey BIGINT NOT NULL,
    l_partkey INTEGER NOT NULL,
    l_quantity DECIMAL(15, 2) NULL,
    l_returnflag CHAR(1) DEFAULT 'N',
    l_shipdate DATE,
    l_comment VARCHAR(44),
    l_ratio DOUBLE PRECISION DEFAULT -1.5e3,
    l_name CHARACTER VARYING(25),
    PRIMARY KEY (l_orderkey, l_partkey)
) WITH (block_size = '4MB', compression = true);
CREATE TABLE date (d_datekey INT PRIMARY KEY, d_year INT4, d_month TEXT, ts TIMESTAMP, iv INTERVAL, ok BOOL);
