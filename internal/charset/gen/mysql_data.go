package main

// The MySQL side of the table, kept as text: no MySQL server is at hand
// to read it from (see the package comment for where it comes from).

// mysqlCollations is MySQL 8.0.30+/8.4's information_schema.COLLATIONS:
// ID, COLLATION_NAME, CHARACTER_SET_NAME and, if IS_DEFAULT, "default".
const mysqlCollations = `
1 big5_chinese_ci big5 default
2 latin2_czech_cs latin2
3 dec8_swedish_ci dec8 default
4 cp850_general_ci cp850 default
5 latin1_german1_ci latin1
6 hp8_english_ci hp8 default
7 koi8r_general_ci koi8r default
8 latin1_swedish_ci latin1 default
9 latin2_general_ci latin2 default
10 swe7_swedish_ci swe7 default
11 ascii_general_ci ascii default
12 ujis_japanese_ci ujis default
13 sjis_japanese_ci sjis default
14 cp1251_bulgarian_ci cp1251
15 latin1_danish_ci latin1
16 hebrew_general_ci hebrew default
18 tis620_thai_ci tis620 default
19 euckr_korean_ci euckr default
20 latin7_estonian_cs latin7
21 latin2_hungarian_ci latin2
22 koi8u_general_ci koi8u default
23 cp1251_ukrainian_ci cp1251
24 gb2312_chinese_ci gb2312 default
25 greek_general_ci greek default
26 cp1250_general_ci cp1250 default
27 latin2_croatian_ci latin2
28 gbk_chinese_ci gbk default
29 cp1257_lithuanian_ci cp1257
30 latin5_turkish_ci latin5 default
31 latin1_german2_ci latin1
32 armscii8_general_ci armscii8 default
33 utf8mb3_general_ci utf8mb3 default
34 cp1250_czech_cs cp1250
35 ucs2_general_ci ucs2 default
36 cp866_general_ci cp866 default
37 keybcs2_general_ci keybcs2 default
38 macce_general_ci macce default
39 macroman_general_ci macroman default
40 cp852_general_ci cp852 default
41 latin7_general_ci latin7 default
42 latin7_general_cs latin7
43 macce_bin macce
44 cp1250_croatian_ci cp1250
45 utf8mb4_general_ci utf8mb4
46 utf8mb4_bin utf8mb4
47 latin1_bin latin1
48 latin1_general_ci latin1
49 latin1_general_cs latin1
50 cp1251_bin cp1251
51 cp1251_general_ci cp1251 default
52 cp1251_general_cs cp1251
53 macroman_bin macroman
54 utf16_general_ci utf16 default
55 utf16_bin utf16
56 utf16le_general_ci utf16le default
57 cp1256_general_ci cp1256 default
58 cp1257_bin cp1257
59 cp1257_general_ci cp1257 default
60 utf32_general_ci utf32 default
61 utf32_bin utf32
62 utf16le_bin utf16le
63 binary binary default
64 armscii8_bin armscii8
65 ascii_bin ascii
66 cp1250_bin cp1250
67 cp1256_bin cp1256
68 cp866_bin cp866
69 dec8_bin dec8
70 greek_bin greek
71 hebrew_bin hebrew
72 hp8_bin hp8
73 keybcs2_bin keybcs2
74 koi8r_bin koi8r
75 koi8u_bin koi8u
76 utf8mb3_tolower_ci utf8mb3
77 latin2_bin latin2
78 latin5_bin latin5
79 latin7_bin latin7
80 cp850_bin cp850
81 cp852_bin cp852
82 swe7_bin swe7
83 utf8mb3_bin utf8mb3
84 big5_bin big5
85 euckr_bin euckr
86 gb2312_bin gb2312
87 gbk_bin gbk
88 sjis_bin sjis
89 tis620_bin tis620
90 ucs2_bin ucs2
91 ujis_bin ujis
92 geostd8_general_ci geostd8 default
93 geostd8_bin geostd8
94 latin1_spanish_ci latin1
95 cp932_japanese_ci cp932 default
96 cp932_bin cp932
97 eucjpms_japanese_ci eucjpms default
98 eucjpms_bin eucjpms
99 cp1250_polish_ci cp1250
101 utf16_unicode_ci utf16
102 utf16_icelandic_ci utf16
103 utf16_latvian_ci utf16
104 utf16_romanian_ci utf16
105 utf16_slovenian_ci utf16
106 utf16_polish_ci utf16
107 utf16_estonian_ci utf16
108 utf16_spanish_ci utf16
109 utf16_swedish_ci utf16
110 utf16_turkish_ci utf16
111 utf16_czech_ci utf16
112 utf16_danish_ci utf16
113 utf16_lithuanian_ci utf16
114 utf16_slovak_ci utf16
115 utf16_spanish2_ci utf16
116 utf16_roman_ci utf16
117 utf16_persian_ci utf16
118 utf16_esperanto_ci utf16
119 utf16_hungarian_ci utf16
120 utf16_sinhala_ci utf16
121 utf16_german2_ci utf16
122 utf16_croatian_ci utf16
123 utf16_unicode_520_ci utf16
124 utf16_vietnamese_ci utf16
128 ucs2_unicode_ci ucs2
129 ucs2_icelandic_ci ucs2
130 ucs2_latvian_ci ucs2
131 ucs2_romanian_ci ucs2
132 ucs2_slovenian_ci ucs2
133 ucs2_polish_ci ucs2
134 ucs2_estonian_ci ucs2
135 ucs2_spanish_ci ucs2
136 ucs2_swedish_ci ucs2
137 ucs2_turkish_ci ucs2
138 ucs2_czech_ci ucs2
139 ucs2_danish_ci ucs2
140 ucs2_lithuanian_ci ucs2
141 ucs2_slovak_ci ucs2
142 ucs2_spanish2_ci ucs2
143 ucs2_roman_ci ucs2
144 ucs2_persian_ci ucs2
145 ucs2_esperanto_ci ucs2
146 ucs2_hungarian_ci ucs2
147 ucs2_sinhala_ci ucs2
148 ucs2_german2_ci ucs2
149 ucs2_croatian_ci ucs2
150 ucs2_unicode_520_ci ucs2
151 ucs2_vietnamese_ci ucs2
159 ucs2_general_mysql500_ci ucs2
160 utf32_unicode_ci utf32
161 utf32_icelandic_ci utf32
162 utf32_latvian_ci utf32
163 utf32_romanian_ci utf32
164 utf32_slovenian_ci utf32
165 utf32_polish_ci utf32
166 utf32_estonian_ci utf32
167 utf32_spanish_ci utf32
168 utf32_swedish_ci utf32
169 utf32_turkish_ci utf32
170 utf32_czech_ci utf32
171 utf32_danish_ci utf32
172 utf32_lithuanian_ci utf32
173 utf32_slovak_ci utf32
174 utf32_spanish2_ci utf32
175 utf32_roman_ci utf32
176 utf32_persian_ci utf32
177 utf32_esperanto_ci utf32
178 utf32_hungarian_ci utf32
179 utf32_sinhala_ci utf32
180 utf32_german2_ci utf32
181 utf32_croatian_ci utf32
182 utf32_unicode_520_ci utf32
183 utf32_vietnamese_ci utf32
192 utf8mb3_unicode_ci utf8mb3
193 utf8mb3_icelandic_ci utf8mb3
194 utf8mb3_latvian_ci utf8mb3
195 utf8mb3_romanian_ci utf8mb3
196 utf8mb3_slovenian_ci utf8mb3
197 utf8mb3_polish_ci utf8mb3
198 utf8mb3_estonian_ci utf8mb3
199 utf8mb3_spanish_ci utf8mb3
200 utf8mb3_swedish_ci utf8mb3
201 utf8mb3_turkish_ci utf8mb3
202 utf8mb3_czech_ci utf8mb3
203 utf8mb3_danish_ci utf8mb3
204 utf8mb3_lithuanian_ci utf8mb3
205 utf8mb3_slovak_ci utf8mb3
206 utf8mb3_spanish2_ci utf8mb3
207 utf8mb3_roman_ci utf8mb3
208 utf8mb3_persian_ci utf8mb3
209 utf8mb3_esperanto_ci utf8mb3
210 utf8mb3_hungarian_ci utf8mb3
211 utf8mb3_sinhala_ci utf8mb3
212 utf8mb3_german2_ci utf8mb3
213 utf8mb3_croatian_ci utf8mb3
214 utf8mb3_unicode_520_ci utf8mb3
215 utf8mb3_vietnamese_ci utf8mb3
223 utf8mb3_general_mysql500_ci utf8mb3
224 utf8mb4_unicode_ci utf8mb4
225 utf8mb4_icelandic_ci utf8mb4
226 utf8mb4_latvian_ci utf8mb4
227 utf8mb4_romanian_ci utf8mb4
228 utf8mb4_slovenian_ci utf8mb4
229 utf8mb4_polish_ci utf8mb4
230 utf8mb4_estonian_ci utf8mb4
231 utf8mb4_spanish_ci utf8mb4
232 utf8mb4_swedish_ci utf8mb4
233 utf8mb4_turkish_ci utf8mb4
234 utf8mb4_czech_ci utf8mb4
235 utf8mb4_danish_ci utf8mb4
236 utf8mb4_lithuanian_ci utf8mb4
237 utf8mb4_slovak_ci utf8mb4
238 utf8mb4_spanish2_ci utf8mb4
239 utf8mb4_roman_ci utf8mb4
240 utf8mb4_persian_ci utf8mb4
241 utf8mb4_esperanto_ci utf8mb4
242 utf8mb4_hungarian_ci utf8mb4
243 utf8mb4_sinhala_ci utf8mb4
244 utf8mb4_german2_ci utf8mb4
245 utf8mb4_croatian_ci utf8mb4
246 utf8mb4_unicode_520_ci utf8mb4
247 utf8mb4_vietnamese_ci utf8mb4
248 gb18030_chinese_ci gb18030 default
249 gb18030_bin gb18030
250 gb18030_unicode_520_ci gb18030
255 utf8mb4_0900_ai_ci utf8mb4 default
256 utf8mb4_de_pb_0900_ai_ci utf8mb4
257 utf8mb4_is_0900_ai_ci utf8mb4
258 utf8mb4_lv_0900_ai_ci utf8mb4
259 utf8mb4_ro_0900_ai_ci utf8mb4
260 utf8mb4_sl_0900_ai_ci utf8mb4
261 utf8mb4_pl_0900_ai_ci utf8mb4
262 utf8mb4_et_0900_ai_ci utf8mb4
263 utf8mb4_es_0900_ai_ci utf8mb4
264 utf8mb4_sv_0900_ai_ci utf8mb4
265 utf8mb4_tr_0900_ai_ci utf8mb4
266 utf8mb4_cs_0900_ai_ci utf8mb4
267 utf8mb4_da_0900_ai_ci utf8mb4
268 utf8mb4_lt_0900_ai_ci utf8mb4
269 utf8mb4_sk_0900_ai_ci utf8mb4
270 utf8mb4_es_trad_0900_ai_ci utf8mb4
271 utf8mb4_la_0900_ai_ci utf8mb4
273 utf8mb4_eo_0900_ai_ci utf8mb4
274 utf8mb4_hu_0900_ai_ci utf8mb4
275 utf8mb4_hr_0900_ai_ci utf8mb4
277 utf8mb4_vi_0900_ai_ci utf8mb4
278 utf8mb4_0900_as_cs utf8mb4
279 utf8mb4_de_pb_0900_as_cs utf8mb4
280 utf8mb4_is_0900_as_cs utf8mb4
281 utf8mb4_lv_0900_as_cs utf8mb4
282 utf8mb4_ro_0900_as_cs utf8mb4
283 utf8mb4_sl_0900_as_cs utf8mb4
284 utf8mb4_pl_0900_as_cs utf8mb4
285 utf8mb4_et_0900_as_cs utf8mb4
286 utf8mb4_es_0900_as_cs utf8mb4
287 utf8mb4_sv_0900_as_cs utf8mb4
288 utf8mb4_tr_0900_as_cs utf8mb4
289 utf8mb4_cs_0900_as_cs utf8mb4
290 utf8mb4_da_0900_as_cs utf8mb4
291 utf8mb4_lt_0900_as_cs utf8mb4
292 utf8mb4_sk_0900_as_cs utf8mb4
293 utf8mb4_es_trad_0900_as_cs utf8mb4
294 utf8mb4_la_0900_as_cs utf8mb4
296 utf8mb4_eo_0900_as_cs utf8mb4
297 utf8mb4_hu_0900_as_cs utf8mb4
298 utf8mb4_hr_0900_as_cs utf8mb4
300 utf8mb4_vi_0900_as_cs utf8mb4
303 utf8mb4_ja_0900_as_cs utf8mb4
304 utf8mb4_ja_0900_as_cs_ks utf8mb4
305 utf8mb4_0900_as_ci utf8mb4
306 utf8mb4_ru_0900_ai_ci utf8mb4
307 utf8mb4_ru_0900_as_cs utf8mb4
308 utf8mb4_zh_0900_as_cs utf8mb4
309 utf8mb4_0900_bin utf8mb4
310 utf8mb4_nb_0900_ai_ci utf8mb4
311 utf8mb4_nb_0900_as_cs utf8mb4
312 utf8mb4_nn_0900_ai_ci utf8mb4
313 utf8mb4_nn_0900_as_cs utf8mb4
314 utf8mb4_sr_latn_0900_ai_ci utf8mb4
315 utf8mb4_sr_latn_0900_as_cs utf8mb4
316 utf8mb4_bs_0900_ai_ci utf8mb4
317 utf8mb4_bs_0900_as_cs utf8mb4
318 utf8mb4_bg_0900_ai_ci utf8mb4
319 utf8mb4_bg_0900_as_cs utf8mb4
320 utf8mb4_gl_0900_ai_ci utf8mb4
321 utf8mb4_gl_0900_as_cs utf8mb4
322 utf8mb4_mn_cyrl_0900_ai_ci utf8mb4
323 utf8mb4_mn_cyrl_0900_as_cs utf8mb4
`

// mysqlCharsets is MySQL 8.0.30+/8.4's information_schema.CHARACTER_SETS:
// CHARACTER_SET_NAME and MAXLEN.
const mysqlCharsets = `
armscii8 1
ascii 1
big5 2
binary 1
cp1250 1
cp1251 1
cp1256 1
cp1257 1
cp850 1
cp852 1
cp866 1
cp932 2
dec8 1
eucjpms 3
euckr 2
gb18030 4
gb2312 2
gbk 2
geostd8 1
greek 1
hebrew 1
hp8 1
keybcs2 1
koi8r 1
koi8u 1
latin1 1
latin2 1
latin5 1
latin7 1
macce 1
macroman 1
sjis 2
swe7 1
tis620 1
ucs2 2
ujis 3
utf16 4
utf16le 4
utf32 4
utf8mb3 3
utf8mb4 4
`
