SELECT (1 + ;
SELECT 'unterminated
