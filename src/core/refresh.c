/* evtop — the console's refresh rules (see refresh.h). */
#include <config.h>

#include "core/refresh.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#define CAP_FACTOR   10
#define CAP_MS       60000
#define STALE_MAX_MS 60000
#define RETRY_MAX_MS 5000
#define BACKOFF_MIN  500
#define BACKOFF_MAX  4000

bool ev_refresh_waited(int no, const char *sqlstate)
{
	switch (no) {
	case 1205: /* ER_LOCK_WAIT_TIMEOUT (innodb_lock_wait_timeout, lock_wait_timeout) */
	case 1969: /* MariaDB ER_STATEMENT_TIMEOUT (max_statement_time) */
	case 3024: /* MySQL ER_QUERY_TIMEOUT (max_execution_time) */
	case 1317: /* ER_QUERY_INTERRUPTED (KILL QUERY) */
	case 1927: /* MariaDB ER_CONNECTION_KILLED */
	case 3169: /* MySQL ER_SESSION_WAS_KILLED */
	case 1053: /* ER_SERVER_SHUTDOWN */
	case 2006: /* CR_SERVER_GONE_ERROR */
	case 2013: /* CR_SERVER_LOST */
		return true;
	default:
		break;
	}
	/* "Query execution was interrupted", by a kill or a time limit, under any errno. */
	return no != 0 && sqlstate != NULL && strcmp(sqlstate, "70100") == 0;
}

double ev_refresh_charge_ms(int no, const char *sqlstate, double wall_ms)
{
	if (ev_refresh_waited(no, sqlstate) || wall_ms < 0)
		return 0;
	return wall_ms;
}

int ev_refresh_cap_ms(int refresh_ms)
{
	long long cap = (long long)refresh_ms * CAP_FACTOR;
	if (cap > CAP_MS)
		cap = CAP_MS;
	return cap < refresh_ms ? refresh_ms : (int)cap;
}

int ev_refresh_interval_ms(int refresh_ms, double cost_ms, int budget_permille)
{
	if (budget_permille <= 0 || cost_ms <= 0)
		return refresh_ms;
	double need = cost_ms * 1000.0 / budget_permille;
	int cap = ev_refresh_cap_ms(refresh_ms);
	if (need >= cap)
		return cap;
	return need > refresh_ms ? (int)need : refresh_ms;
}

long long ev_refresh_stale_after_ms(int interval_ms)
{
	long long two = 2LL * interval_ms;
	long long at_most = STALE_MAX_MS;
	if (at_most < (long long)interval_ms + 5000)
		at_most = (long long)interval_ms + 5000;
	return two < at_most ? two : at_most;
}

int ev_refresh_retry_ms(int interval_ms)
{
	return interval_ms < RETRY_MAX_MS ? interval_ms : RETRY_MAX_MS;
}

int ev_refresh_backoff_ms(int failures)
{
	int ms = BACKOFF_MIN;
	for (int i = 1; i < failures && ms < BACKOFF_MAX; i++)
		ms *= 2;
	return ms < BACKOFF_MAX ? ms : BACKOFF_MAX;
}

bool ev_refresh_clock(const char *server_now, long long elapsed_ms, char *buf, size_t size)
{
	struct tm tm;
	int n = 0;
	memset(&tm, 0, sizeof(tm));
	if (server_now == NULL ||
	    sscanf(server_now, "%4d-%2d-%2d %2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
	           &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &n) != 6) {
		snprintf(buf, size, "%s", server_now ? server_now : "");
		return false;
	}
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	/* The wall clock of the session's zone, counted as UTC: the seconds add exactly. */
	time_t t = timegm(&tm) + (time_t)(elapsed_ms > 0 ? elapsed_ms / 1000 : 0);
	struct tm out;
	gmtime_r(&t, &out);
	strftime(buf, size, "%Y-%m-%d %H:%M:%S", &out);
	return true;
}
