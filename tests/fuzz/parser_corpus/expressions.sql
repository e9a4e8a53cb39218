-- a comment /* not nested here */
SELECT /* block /* nested */ comment */ -x::int, - -5, +7, 'it''s', "Mixed""Case", t.*, *,
    CASE WHEN a THEN 1 WHEN b THEN 2 ELSE 3 END, CASE a WHEN 1 THEN 'one' END,
    CAST(a AS NUMERIC(10, 2)), a || b || c, extract(month FROM d), substring(s, 1, 2),
    substring(s FROM 1 FOR 2), DATE '1998-12-01' - INTERVAL '90' DAY, INTERVAL '1 day', INTERVAL 3 MONTHS,
    TIMESTAMP '2020-01-01 00:00:00', coalesce(a, b), nullif(a, 0), count(*), count(DISTINCT a), left(s, 2),
    x BETWEEN 1 AND 2, x NOT BETWEEN 1 AND 2, x IN (1, 2), x NOT IN (SELECT 1), x IS NULL, x IS NOT NULL,
    x LIKE 'a%', x NOT LIKE 'b', EXISTS (SELECT 1), NOT EXISTS (SELECT 1), (SELECT max(a) FROM t),
    1.5e-3, .5, 1., 007, a <> b, a != b, a <= b, a >= b, a % b, TRUE, FALSE, NULL
FROM t;
