CREATE OR REPLACE VIEW revenue0 (supplier_no, total_revenue) AS
    SELECT l_suppkey, sum(l_extendedprice * (1 - l_discount)) FROM lineitem GROUP BY l_suppkey;
CREATE VIEW v AS (SELECT 1 AS a) UNION ALL SELECT 2 ORDER BY 1;
DROP VIEW IF EXISTS revenue0; DROP VIEW v;
DROP TABLE IF EXISTS lineitem; DROP TABLE "Quoted Name";
