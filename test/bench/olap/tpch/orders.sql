-- TPC-H orders :lo .. :hi (row number o, o_orderkey the sparse key of o).
-- Status 'F' when all its lines shipped by 1995-06-17 (CURRENTDATE), 'O' when
-- none did, else 'P'; total price = the sum of its lines' extended price
-- x (1 - discount) x (1 + tax), in cents as dbgen.  Needs :ncust, :npart, :nclerk.
INSERT INTO orders
SELECT gen_orderkey(o), gen_custkey(o, 3, :ncust),
       CASE WHEN x.nf = nl THEN 'F' WHEN x.nf = 0 THEN 'O' ELSE 'P' END,
       x.cents / 100.0, date '1992-01-01' + oday,
       gen_pick(o, 4, '{1-URGENT,2-HIGH,3-MEDIUM,4-NOT SPECIFIED,5-LOW}'),
       'Clerk#' || lpad((1 + gen_u(o, 5, :nclerk))::text, 9, '0'), 0, gen_text(o, 6, 19, 78)
FROM (SELECT o, tpch_nlines(o) AS nl, tpch_oday(o) AS oday
      FROM generate_series(:lo::int8, :hi::int8) o OFFSET 0) oo,
     LATERAL (SELECT sum(q * gen_retail_cents(tpch_partkey(j, :npart))::int8 * (100 - tpch_discount(j)) / 100
                         * (100 + tpch_tax(j)) / 100) AS cents,
                     count(*) FILTER (WHERE oday + tpch_shipdays(j) <= 1263) AS nf
              FROM (SELECT o * 8 + l AS j, tpch_quantity(o * 8 + l) AS q FROM generate_series(1, nl) l) ll) x;
