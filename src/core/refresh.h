/* evtop — the console's refresh, as pure rules: what evtop's own statements cost the server
 * (the refresh budget counts it), how far the interval stretches to keep that cost within the
 * budget, when the figures on screen stop being live, how often a lost connection is tried
 * again, and the server's clock between two refreshes. */
#ifndef EV_CORE_REFRESH_H
#define EV_CORE_REFRESH_H

#include <stdbool.h>
#include <stddef.h>

/* Whether a statement that ended with this error spent its time waiting rather than working:
 * a lock wait timeout (1205), the server's statement time limit (MariaDB 1969, MySQL 3024,
 * SQLSTATE 70100), KILL (1317 query interrupted, 1927 and 3169 connection or session killed,
 * 1053 shutdown), or its connection lost under it (client 2006, 2013). errno 0: it ran. The
 * client cannot see what such a statement did on the server (performance_schema is off by
 * default), and most of its wall time is the wait. */
bool ev_refresh_waited(int server_errno, const char *sqlstate);

/* The server time a statement is charged: 0 when it waited (above), else its wall time. */
double ev_refresh_charge_ms(int server_errno, const char *sqlstate, double wall_ms);

/* The longest stretch of a set interval: 10 times it, and 60 s at most (never below the set
 * interval itself). */
int ev_refresh_cap_ms(int refresh_ms);

/* The interval to wait after a refresh that cost cost_ms of server time: the set interval,
 * stretched so cost / interval stays within budget_permille (1/1000 of one core), up to
 * ev_refresh_cap_ms. Follows the last refresh's cost alone: one costly refresh stretches the
 * next interval only. */
int ev_refresh_interval_ms(int refresh_ms, double cost_ms, int budget_permille);

/* How old the last good refresh may be while the console still says "connected": two
 * intervals (the stretched one), at most 60 s; an interval set above 30 s gets one interval
 * and 5 s more. */
long long ev_refresh_stale_after_ms(int interval_ms);

/* While the connection is lost: how long until the next refresh, i.e. reconnect attempt (at
 * most 5 s, however long the interval). */
int ev_refresh_retry_ms(int interval_ms);

/* The wait before connect attempt n + 1 after n failed ones (n >= 1): 500 ms, doubling, at
 * most 4 s, so that attempts stay under 5 s apart. */
int ev_refresh_backoff_ms(int failures);

/* The server's time elapsed_ms after it read server_now ('YYYY-MM-DD hh:mm:ss'), into buf in
 * the same form (whole seconds, rounded down). Returns false (buf = server_now) when
 * server_now does not parse. */
bool ev_refresh_clock(const char *server_now, long long elapsed_ms, char *buf, size_t size);

#endif
