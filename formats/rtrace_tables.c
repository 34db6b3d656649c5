/* Descriptor tables generated from the event lists in rtrace.h: names, sizes and field layouts used by
 * the reader, dump and the exporters. Linked into both librailscope.so and the railscope CLI. */
#include <ctype.h>

#include "rtrace.h"

const uint8_t rs_ftype_size[] = {
    [RS_T_u8] = 1,  [RS_T_u16] = 2, [RS_T_u32] = 4, [RS_T_u64] = 8, [RS_T_i32] = 4, [RS_T_i64] = 8,
    [RS_T_str] = 4, [RS_T_x64] = 8, [RS_T_x32] = 4, [RS_T_ts] = 8,  [RS_T_dur] = 8,
};
const char *const rs_ftype_names[] = {
    [RS_T_u8] = "u8",   [RS_T_u16] = "u16", [RS_T_u32] = "u32", [RS_T_u64] = "u64",
    [RS_T_i32] = "i32", [RS_T_i64] = "i64", [RS_T_str] = "str", [RS_T_x64] = "x64",
    [RS_T_x32] = "x32", [RS_T_ts] = "ts",   [RS_T_dur] = "dur",
};

#define RS_FIELD_DESC(t, n)  {#n, RS_T_##t},
#define RS_FIELD_COUNT(t, n) +1
#define RS_FIELD_LIST(k, fam, var) \
    static const struct rs_field_desc rs_fields_##k[] = {RS_FIELDS_##k(RS_FIELD_DESC){0, 0}};
RS_EVENTS(RS_FIELD_LIST)
#undef RS_FIELD_LIST

/* Kind names are the enum names in lower case; spelled out by the X-macro as upper-case strings and
 * lowered once here so that the list stays the single source. */
const struct rs_kind_desc rs_kinds[RS_EV_COUNT] = {
#define RS_KIND_DESC(k, fam, var) \
    [RS_EV_##k] = {#k, RS_FAM_##fam, var, sizeof(struct rs_ev_##k), 0 RS_FIELDS_##k(RS_FIELD_COUNT), rs_fields_##k},
    RS_EVENTS(RS_KIND_DESC)
#undef RS_KIND_DESC
};
#undef RS_FIELD_DESC
#undef RS_FIELD_COUNT

const char *const rs_family_names[RS_FAM_COUNT] = {
#define RS_FAM_NAME(name, bit) [bit] = #name,
    RS_FAMILIES(RS_FAM_NAME)
#undef RS_FAM_NAME
};
