-- Star Schema Benchmark tables (O'Neil, O'Neil, Chen, "Star Schema Benchmark",
-- revision 3, 2009): the spec's columns; "fixed text" as char(n), "variable
-- text" as varchar(n), numbers as integer (as dbgen writes them: prices in
-- cents).  The table is called "date" as in the spec's queries.
-- psql variable: persistence ('UNLOGGED' or '')
DROP TABLE IF EXISTS lineorder, customer, supplier, part, "date";
CREATE :persistence TABLE customer (
  c_custkey    integer     NOT NULL,
  c_name       varchar(25) NOT NULL,
  c_address    varchar(25) NOT NULL,
  c_city       char(10)    NOT NULL,
  c_nation     char(15)    NOT NULL,
  c_region     char(12)    NOT NULL,
  c_phone      char(15)    NOT NULL,
  c_mktsegment char(10)    NOT NULL
);
CREATE :persistence TABLE supplier (
  s_suppkey    integer     NOT NULL,
  s_name       char(25)    NOT NULL,
  s_address    varchar(25) NOT NULL,
  s_city       char(10)    NOT NULL,
  s_nation     char(15)    NOT NULL,
  s_region     char(12)    NOT NULL,
  s_phone      char(15)    NOT NULL
);
CREATE :persistence TABLE part (
  p_partkey    integer     NOT NULL,
  p_name       varchar(22) NOT NULL,
  p_mfgr       char(6)     NOT NULL,
  p_category   char(7)     NOT NULL,
  p_brand1     char(9)     NOT NULL,
  p_color      varchar(11) NOT NULL,
  p_type       varchar(25) NOT NULL,
  p_size       integer     NOT NULL,
  p_container  char(10)    NOT NULL
);
CREATE :persistence TABLE "date" (
  d_datekey          integer     NOT NULL,
  d_date             char(18)    NOT NULL,
  d_dayofweek        char(9)     NOT NULL,
  d_month            char(9)     NOT NULL,
  d_year             integer     NOT NULL,
  d_yearmonthnum     integer     NOT NULL,
  d_yearmonth        char(7)     NOT NULL,
  d_daynuminweek     integer     NOT NULL,
  d_daynuminmonth    integer     NOT NULL,
  d_daynuminyear     integer     NOT NULL,
  d_monthnuminyear   integer     NOT NULL,
  d_weeknuminyear    integer     NOT NULL,
  d_sellingseason    varchar(12) NOT NULL,
  d_lastdayinweekfl  boolean     NOT NULL,
  d_lastdayinmonthfl boolean     NOT NULL,
  d_holidayfl        boolean     NOT NULL,
  d_weekdayfl        boolean     NOT NULL
);
CREATE :persistence TABLE lineorder (
  lo_orderkey      bigint   NOT NULL,
  lo_linenumber    integer  NOT NULL,
  lo_custkey       integer  NOT NULL,
  lo_partkey       integer  NOT NULL,
  lo_suppkey       integer  NOT NULL,
  lo_orderdate     integer  NOT NULL,
  lo_orderpriority char(15) NOT NULL,
  lo_shippriority  char(1)  NOT NULL,
  lo_quantity      integer  NOT NULL,
  lo_extendedprice integer  NOT NULL,
  lo_ordtotalprice integer  NOT NULL,
  lo_discount      integer  NOT NULL,
  lo_revenue       integer  NOT NULL,
  lo_supplycost    integer  NOT NULL,
  lo_tax           integer  NOT NULL,
  lo_commitdate    integer  NOT NULL,
  lo_shipmode      char(10) NOT NULL
);

-- the date table (2556 days from 1992-01-01, as dbgen writes it) is loaded here:
-- the lineorder generator's ssb_datekey(day) reads its keys from a constant
-- array built from it
INSERT INTO "date"
SELECT to_char(d, 'YYYYMMDD')::int,
       to_char(d, 'FMMonth FMDD, YYYY'),
       to_char(d, 'FMDay'),
       to_char(d, 'FMMonth'),
       extract(year FROM d)::int,
       to_char(d, 'YYYYMM')::int,
       to_char(d, 'MonYYYY'),
       extract(dow FROM d)::int + 1,
       extract(day FROM d)::int,
       extract(doy FROM d)::int,
       extract(month FROM d)::int,
       (extract(doy FROM d)::int - 1) / 7 + 1,
       CASE WHEN extract(month FROM d) = 12 THEN 'Christmas'
            WHEN extract(month FROM d) IN (1, 2) THEN 'Winter'
            WHEN extract(month FROM d) IN (3, 4, 5) THEN 'Spring'
            WHEN extract(month FROM d) IN (6, 7, 8) THEN 'Summer'
            ELSE 'Fall' END,
       extract(dow FROM d) = 6,
       extract(month FROM d + 1) <> extract(month FROM d),
       to_char(d, 'MMDD') IN ('0101', '0704', '1225', '1231', '1124', '0530', '0901', '1011'),
       extract(dow FROM d) BETWEEN 1 AND 5
FROM (SELECT date '1992-01-01' + k AS d FROM generate_series(0, 2555) k) s;

DO $do$
BEGIN
  EXECUTE format($f$CREATE OR REPLACE FUNCTION ssb_datekey(day int4) RETURNS int4
    LANGUAGE sql IMMUTABLE PARALLEL SAFE AS %L$f$,
    format('SELECT (%L::int4[])[day + 1]', (SELECT array_agg(d_datekey ORDER BY d_datekey) FROM "date")));
END
$do$;
