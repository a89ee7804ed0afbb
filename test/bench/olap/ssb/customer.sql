-- SSB customer rows :lo .. :hi (c_custkey = row number); the city is the
-- nation's first 9 letters and a digit 0-9 (250 cities, e.g. 'UNITED KI1')
INSERT INTO customer
SELECT i, 'Customer#' || lpad(i::text, 9, '0'), gen_astr(i, 201, 10, 25),
       rpad(substr(gen_nation(n), 1, 9), 9) || gen_u(i, 203, 10),
       gen_nation(n), gen_region(gen_nation_region(n)), gen_phone(i, 204, n),
       gen_pick(i, 207, '{AUTOMOBILE,BUILDING,FURNITURE,MACHINERY,HOUSEHOLD}')
FROM (SELECT i, gen_u(i, 202, 25) AS n FROM generate_series(:lo::int8, :hi::int8) i OFFSET 0) s;
