/* evtop — facts about the client library (no <mysql.h> outside src/db). */
#ifndef EV_DB_DBINFO_H
#define EV_DB_DBINFO_H

/* The client library's name and version, e.g. "libmariadb 3.3.20". Static storage. */
const char *ev_db_client_info(void);

#endif
