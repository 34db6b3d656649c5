/* The ranges the library accepts for its numeric settings: one source for tracer/config.c, which reads them from
 * the environment, and cli/record.c, which checks its --flush-ms / --buffer-kb before starting the command (so a
 * bad value is one usage error, not a warning in every traced process). */
#ifndef RS_CONFIG_LIMITS_H
#define RS_CONFIG_LIMITS_H

#define RS_FLUSH_MS_MIN  10
#define RS_FLUSH_MS_MAX  60000
#define RS_BUFFER_KB_MIN 64
#define RS_BUFFER_KB_MAX (1024 * 1024)

#endif
