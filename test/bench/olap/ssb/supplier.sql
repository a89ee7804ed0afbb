-- SSB supplier rows :lo .. :hi (s_suppkey = row number), cities as customer's
INSERT INTO supplier
SELECT i, 'Supplier#' || lpad(i::text, 9, '0'), gen_astr(i, 301, 10, 25),
       rpad(substr(gen_nation(n), 1, 9), 9) || gen_u(i, 303, 10),
       gen_nation(n), gen_region(gen_nation_region(n)), gen_phone(i, 304, n)
FROM (SELECT i, gen_u(i, 302, 25) AS n FROM generate_series(:lo::int8, :hi::int8) i OFFSET 0) s;
