-- TPC-H part rows :lo .. :hi (p_partkey = row number)
INSERT INTO part
SELECT i, gen_color(i, 601) || ' ' || gen_color(i, 602) || ' ' || gen_color(i, 603) || ' '
          || gen_color(i, 604) || ' ' || gen_color(i, 605),
       'Manufacturer#' || m, 'Brand#' || m || (1 + gen_u(i, 607, 5)), gen_ptype(i, 608),
       1 + gen_u(i, 611, 50), gen_container(i, 612), gen_retail_cents(i::int4) / 100.0,
       gen_text(i, 614, 5, 22)
FROM (SELECT i, 1 + gen_u(i, 606, 5) AS m FROM generate_series(:lo::int8, :hi::int8) i OFFSET 0) s;
