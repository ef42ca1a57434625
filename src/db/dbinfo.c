#include <config.h>

#include "db/dbinfo.h"

#include <mysql.h>
#include <stdio.h>

const char *ev_db_client_info(void)
{
	static char info[96];

	if (info[0] == '\0')
		snprintf(info, sizeof(info), "%s %s", EVTOP_CLIENT_LIBRARY,
		         mysql_get_client_info());
	return info;
}
