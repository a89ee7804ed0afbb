-- SSB part rows :lo .. :hi (p_partkey = row number): manufacturer M 1-5,
-- category MFGR#MC (C 1-5: 25 categories), brand MFGR#MCB (B 1-40: 1000 brands)
INSERT INTO part
SELECT i, gen_color(i, 401) || ' ' || gen_color(i, 402), 'MFGR#' || m, 'MFGR#' || m || c,
       'MFGR#' || m || c || b, gen_color(i, 406), gen_ptype(i, 407), 1 + gen_u(i, 410, 50),
       gen_container(i, 411)
FROM (SELECT i, 1 + gen_u(i, 403, 5) AS m, 1 + gen_u(i, 404, 5) AS c, 1 + gen_u(i, 405, 40) AS b
      FROM generate_series(:lo::int8, :hi::int8) i OFFSET 0) s;
