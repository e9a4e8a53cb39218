COPY lineitem FROM '/data/lineitem.tbl' WITH (FORMAT csv, DELIMITER '|', HEADER false, NULL '');
COPY t (a, "B") TO 'out.csv' (HEADER, FORMAT CSV);
INSERT INTO t (a, b) VALUES (1, 'x'), (-2, NULL), (3 + 4, DATE '2020-01-01');
INSERT INTO t SELECT * FROM u WHERE x IS NOT NULL;
INSERT INTO t (a) (WITH c AS (SELECT 1) SELECT * FROM c);
