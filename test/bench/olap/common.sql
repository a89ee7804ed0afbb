-- Helper functions of the generators (test/bench/olap): every value is a
-- function of a row number and a stream number through PostgreSQL's
-- hashint8extended, never random(), so that the data are the same on every
-- run, for every split of the rows between loader sessions, on every x86-64
-- machine.  All are one-expression SQL functions: the planner inlines them.

-- gen_u(i, s, n): integer uniform in 0 .. n-1, from row number i, stream s
CREATE OR REPLACE FUNCTION gen_u(i int8, s int4, n int4) RETURNS int4
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT ((hashint8extended(i, s) & 2147483647) % n)::int4 $$;

-- gen_pick(i, s, a): one element of the array a, uniformly
CREATE OR REPLACE FUNCTION gen_pick(i int8, s int4, a text[]) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT a[1 + ((hashint8extended(i, s) & 2147483647) % cardinality(a))::int4] $$;

-- gen_custkey(i, s, ncust): a customer key, uniform over the keys not
-- divisible by 3 (TPC-H's rule: a third of the customers have no orders);
-- the m-th such key (from 0) is 3 m / 2 + 1
CREATE OR REPLACE FUNCTION gen_custkey(i int8, s int4, ncust int4) RETURNS int4
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT 3 * ((hashint8extended(i, s) & 2147483647) % (ncust - ncust / 3))::int4 / 2 + 1 $$;

-- gen_orderkey(o): TPC-H's sparse order keys, 8 used of every 32
CREATE OR REPLACE FUNCTION gen_orderkey(o int8) RETURNS int8
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT ((o - 1) / 8) * 32 + (o - 1) % 8 + 1 $$;

-- gen_retail_cents(p): TPC-H's part retail price (in cents) of part key p
CREATE OR REPLACE FUNCTION gen_retail_cents(p int4) RETURNS int4
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT 90000 + (p / 10) % 20001 + 100 * (p % 1000) $$;

-- gen_phone(i, s, nation): TPC-H's phone number: country code nation + 10
CREATE OR REPLACE FUNCTION gen_phone(i int8, s int4, nation int4) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT (nation + 10) || '-' || (100 + ((hashint8extended(i, s) & 2147483647) % 900))
         || '-' || (100 + ((hashint8extended(i, s + 1) & 2147483647) % 900))
         || '-' || (1000 + ((hashint8extended(i, s + 2) & 2147483647) % 9000)) $$;

-- gen_text(i, s, lo, hi): lo to hi characters of a fixed pseudo-text (TPC-H's
-- comment words in a fixed shuffled order), from a position given by the hash:
-- comments and addresses of realistic widths at the price of one substr
DO $do$
DECLARE
  words text[] := string_to_array('furiously sly careful blithe quick fluffy slow quiet ruthless thin '
    'close dogged daring brave stealthy permanent enticing idle busy regular final ironic even bold '
    'silent foxes ideas theodolites pinto beans instructions dependencies excuses platelets asymptotes '
    'courts dolphins multipliers sauternes warthogs frets dinos attainments somas Tiresias patterns '
    'forges braids hockey players frays warhorses dugouts notornis epitaphs pearls tithes waters '
    'orbits gifts sheaves depths sentiments decoys realms pains grouches escapades sleep wake are '
    'cajole haggle nag use boost affix detect integrate maintain nod was lose sublate solve thrash '
    'promise engage hinder print x-ray breach eat grow impress mold poach serve run dazzle snooze '
    'doze unwind kindle play hang believe doubt about above according across after against along '
    'alongside among around at atop before behind beneath beside besides between beyond by despite '
    'during except for from in inside instead of into near of on outside over past since through '
    'throughout to toward under until up upon without with within quickly carefully blithely slyly', ' ');
  txt text;
BEGIN
  SELECT string_agg(words[1 + (hashint8extended(k, 7) & 2147483647) % cardinality(words)], ' ' ORDER BY k)
    INTO txt FROM generate_series(1, 400) k;
  txt := substr(txt, 1, 1600);
  EXECUTE format($f$CREATE OR REPLACE FUNCTION gen_text(i int8, s int4, lo int4, hi int4) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS %L$f$,
    format('SELECT substr(%L::text, 1 + ((hashint8extended(i, s) & 2147483647) %% 1400)::int4, '
           'lo + ((hashint8extended(i, s + 1) & 2147483647) %% (hi - lo + 1))::int4)', txt));
  -- addresses: letters, digits, spaces and commas (TPC-H's v-strings)
  SELECT string_agg(md5(k::text), '' ORDER BY k) INTO txt FROM generate_series(1, 40) k;
  txt := translate(txt, '0a', ' ,');
  EXECUTE format($f$CREATE OR REPLACE FUNCTION gen_astr(i int8, s int4, lo int4, hi int4) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS %L$f$,
    format('SELECT substr(%L::text, 1 + ((hashint8extended(i, s) & 2147483647) %% 1200)::int4, '
           'lo + ((hashint8extended(i, s + 1) & 2147483647) %% (hi - lo + 1))::int4)', txt));
END
$do$;

-- TPC-H's 25 nations (key n = 0..24) and 5 regions (key 0..4)
CREATE OR REPLACE FUNCTION gen_nation(n int4) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT ('{ALGERIA,ARGENTINA,BRAZIL,CANADA,EGYPT,ETHIOPIA,FRANCE,GERMANY,INDIA,INDONESIA,IRAN,IRAQ,JAPAN,JORDAN,KENYA,MOROCCO,MOZAMBIQUE,PERU,CHINA,ROMANIA,SAUDI ARABIA,VIETNAM,RUSSIA,UNITED KINGDOM,UNITED STATES}'::text[])[n + 1] $$;
CREATE OR REPLACE FUNCTION gen_nation_region(n int4) RETURNS int4
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT ('{0,1,1,1,4,0,3,3,2,2,4,4,2,4,0,0,0,1,2,3,4,2,3,3,1}'::int4[])[n + 1] $$;
CREATE OR REPLACE FUNCTION gen_region(r int4) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT ('{AFRICA,AMERICA,ASIA,EUROPE,MIDDLE EAST}'::text[])[r + 1] $$;
-- TPC-H's 92 part-name colours
CREATE OR REPLACE FUNCTION gen_color(i int8, s int4) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT ('{almond,antique,aquamarine,azure,beige,bisque,black,blanched,blue,blush,brown,burlywood,burnished,chartreuse,chiffon,chocolate,coral,cornflower,cornsilk,cream,cyan,dark,deep,dim,dodger,drab,firebrick,floral,forest,frosted,gainsboro,ghost,goldenrod,green,grey,honeydew,hot,indian,ivory,khaki,lace,lavender,lawn,lemon,light,lime,linen,magenta,maroon,medium,metallic,midnight,mint,misty,moccasin,navajo,navy,olive,orange,orchid,pale,papaya,peach,peru,pink,plum,powder,puff,purple,red,rose,rosy,royal,saddle,salmon,sandy,seashell,sienna,sky,slate,smoke,snow,spring,steel,tan,thistle,tomato,turquoise,violet,wheat,white,yellow}'::text[])[1 + ((hashint8extended(i, s) & 2147483647) % 92)::int4] $$;
-- TPC-H's 150 part types (3 syllables) and 40 containers (2 syllables)
CREATE OR REPLACE FUNCTION gen_ptype(i int8, s int4) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT ('{STANDARD,SMALL,MEDIUM,LARGE,ECONOMY,PROMO}'::text[])[1 + ((hashint8extended(i, s) & 2147483647) % 6)::int4]
          || ' ' || ('{ANODIZED,BURNISHED,PLATED,POLISHED,BRUSHED}'::text[])[1 + ((hashint8extended(i, s + 1) & 2147483647) % 5)::int4]
          || ' ' || ('{TIN,NICKEL,BRASS,STEEL,COPPER}'::text[])[1 + ((hashint8extended(i, s + 2) & 2147483647) % 5)::int4] $$;
CREATE OR REPLACE FUNCTION gen_container(i int8, s int4) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT ('{SM,LG,MED,JUMBO,WRAP}'::text[])[1 + ((hashint8extended(i, s) & 2147483647) % 5)::int4]
          || ' ' || ('{CASE,BOX,BAG,JAR,PKG,PACK,CAN,DRUM}'::text[])[1 + ((hashint8extended(i, s + 1) & 2147483647) % 8)::int4] $$;
