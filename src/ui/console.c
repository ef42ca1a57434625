/* evtop — the console on top of the views: its main loop, the keys' and ':' commands'
 * dispatcher, the status and hint lines, scripted runs and switching sources. app.c below is
 * the floor the views stand on; this file is the only one of the floor's users that opens
 * views it does not own. The UI thread owns curses and never waits on the network:
 * each turn it drains keys, drains finished jobs (dropping those of a superseded generation),
 * fires the refresh timer, draws what is dirty with one doupdate(), then polls the terminal
 * and the workers' wake-up pipes until the next timer. */
#include <config.h>

#include "ui/app.h"
#include "core/ambiguous.h"
#include "core/audit.h"
#include "core/doctor.h"
#include "core/files.h"
#include "core/i18n.h"
#include "core/refresh.h"
#include "core/text.h"
#include "ui/term.h"
#include "ui/write.h"

#include <curses.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

static volatile sig_atomic_t got_quit, got_winch;

static void on_quit(int sig)
{
	(void)sig;
	got_quit = 1;
}

static void on_winch(int sig)
{
	(void)sig;
	got_winch = 1;
}

static void on_crash(int sig)
{
	ev_term_stop();
	signal(sig, SIG_DFL);
	raise(sig);
}

/* --- status line, hints, message line -------------------------------------------------- */

static void fmt_ms(char *buf, size_t size, long long ms)
{
	if (ms % 1000 == 0)
		snprintf(buf, size, "%llds", ms / 1000);
	else
		snprintf(buf, size, "%.1fs", (double)ms / 1000.0);
}

/* Which source, when there are several, into source; where its reads come from, when it has
 * a replica, into lag: a replica's figures are as old as its lag. Returns the line's style,
 * a warning when a replica is behind. */
static int status_where(struct app *a, char *source, size_t ssize, char *lag, size_t lsize,
                        int style)
{
	const char *src_name = a->src->name ? a->src->name : "default";
	if (a->all_mode)
		/* TRANSLATORS: the status line: every source at once. */
		snprintf(source, ssize, _("all %d sources · "), a->nsources);
	else if (a->nsources > 1)
		/* TRANSLATORS: the status line: the source's name, its place among the sources. */
		snprintf(source, ssize, _("source %.*s [%d/%d] · "), app_cut(src_name, 64),
		         src_name, a->cur_source + 1, a->nsources);
	int behind = 0;
	for (int i = 0; a->all_mode && a->all_endpoints != NULL && i < a->nsources; i++)
		if (a->all_endpoints[i] != NULL &&
		    (a->sites[i].lag_s < 0 || a->sites[i].lag_s >= a->cfg->lag_warning_s))
			behind++;
	if (a->all_mode) {
		/* Each source's row shows its replica's lag; the line says that one is behind. */
		if (behind > 0)
			snprintf(lag, lsize,
			         behind > 1 ? _(" · %d replicas behind or lag unknown")
			                    : _(" · %d replica behind or lag unknown"),
			         behind);
		if (behind > 0 && a->state == CONN_OK && style == EV_STYLE_STATUS_LINE)
			style = EV_STYLE_WARNING;
	} else if (a->read_src != NULL && a->lag_s >= 0)
		/* TRANSLATORS: the status line: the replica's lag in seconds, then " (BEHIND)"
		 * or nothing. */
		snprintf(lag, lsize, _(" · replica lag %llds%s"), a->lag_s,
		         a->lag_s >= a->cfg->lag_warning_s ? _(" (BEHIND)") : "");
	else if (a->read_src != NULL)
		/* TRANSLATORS: the status line: the replica's lag is unknown; %s%.*s is why. */
		snprintf(lag, lsize, _(" · replica lag ?%s%.*s"), a->lag_note[0] ? " " : "",
		         app_cut(a->lag_note, 120), a->lag_note);
	else if (ev_source_has_replica(a->src))
		snprintf(lag, lsize, "%s", _(" · reading the primary"));
	if (!a->all_mode && a->read_src != NULL &&
	    (a->lag_s < 0 || a->lag_s >= a->cfg->lag_warning_s) && a->state == CONN_OK &&
	    style == EV_STYLE_STATUS_LINE)
		style = EV_STYLE_WARNING;
	return style;
}

/* The status line, in the order an incident needs it: whether the data is live (the
 * connection, how old the data is), whether evtop may write, any warning; then the server's
 * clock and the refresh; then where the data comes from. At 80 columns the first three are
 * never cut. */
static void status_text(struct app *a, char *line, size_t size, int *style_out)
{
	char every[32], eff[32], dur[32];
	const char *state;
	int style = EV_STYLE_STATUS_LINE;
	long long now = app_now(a);
	long long age = a->have_ok ? now - a->last_ok_at : 0;
	/* Data not refreshed within two (stretched) intervals is not live, whatever the
	 * connection says: a refresh that hangs, or none tried. */
	bool old = a->have_ok && age > ev_refresh_stale_after_ms(a->effective_ms);

	switch (a->state) {
	case CONN_OK:
		/* Up, but no refresh has come back in time (one hangs, or the refresh is
		 * paused): not "connected". */
		state = !old ? _("connected") : a->paused ? _("paused") : _("waiting");
		break;
	case CONN_LOST:
		state = _("reconnecting");
		break;
	default:
		state = _("connecting");
		break;
	}
	/* How old the data is, once it is older than the refresh: "STALE since" (hh:mm:ss of
	 * the server's day, the date too when it was another day) past two intervals. */
	char stale[256] = "";
	ev_format_duration(age / 1000, dur, sizeof(dur));
	const char *since = a->stale_since[0] ? a->stale_since : a->server_now;
	if (a->have_ok && (a->stale_since[0] || old)) {
		char today[32];
		ev_refresh_clock(a->server_now, now - a->server_now_at, today, sizeof(today));
		bool same_day = strlen(since) > 11 && strncmp(since, today, 11) == 0;
		/* TRANSLATORS: the status line; %s the server's time, then an age ("5s"). */
		snprintf(stale, sizeof(stale), _(" · STALE since %s (data %s old)"),
		         same_day ? since + 11 : since, dur);
	} else if (a->stale_since[0]) {
		snprintf(stale, sizeof(stale), _(" · STALE since %s"), a->stale_since);
	} else if (a->have_ok && age > a->effective_ms) {
		/* TRANSLATORS: the status line; %s is an age ("5s"). */
		snprintf(stale, sizeof(stale), _(" · data %s old"), dur);
	}
	if (a->stale_since[0] || old || a->state == CONN_LOST)
		style = EV_STYLE_STALE;
	fmt_ms(every, sizeof(every), a->refresh_ms);
	fmt_ms(eff, sizeof(eff), a->effective_ms);
	char refresh[96];
	if (a->paused)
		/* TRANSLATORS: the status line's refresh: paused (p). */
		snprintf(refresh, sizeof(refresh), "%s", _("PAUSED"));
	else if (a->effective_ms > a->refresh_ms)
		/* TRANSLATORS: the status line's refresh, stretched: "2s→4s (budget 5.0%)". */
		snprintf(refresh, sizeof(refresh), _("%s→%s (budget %.1f%%)"), every, eff,
		         a->cfg->budget_permille / 10.0);
	else
		snprintf(refresh, sizeof(refresh), "%s", every);
	char took[48] = "";
	if (a->last_refresh_ms > 0 && !a->scripted)
		snprintf(took, sizeof(took), " (%.0f ms)", a->last_refresh_ms);
	/* The server's clock keeps moving between refreshes, from its last reading. */
	char clock[32] = "-";
	if (a->have_ok && a->server_now[0])
		ev_refresh_clock(a->server_now, now - a->server_now_at, clock, sizeof(clock));
	char offset[48] = "";
	if (a->have_offset && !a->scripted && (a->server_offset_s > 1 || a->server_offset_s < -1))
		snprintf(offset, sizeof(offset), " (%+llds)", a->server_offset_s);
	/* A suspected time zone mismatch: the figures that compare with NOW() are off. */
	char zone[96] = "";
	bool suspect = false;
	for (int t = 0; t < EV_TABLE_COUNT; t++)
		suspect = suspect || a->clock_suspect[t];
	if (suspect)
		/* TRANSLATORS: the status line: a time zone mismatch is suspected; %s is
		 * " (clock-ok)" (a command's name) or nothing. */
		snprintf(zone, sizeof(zone), _(" · CLOCK SUSPECT%s"),
		         a->clock_ok ? " (clock-ok)" : "");
	if (suspect && a->state == CONN_OK && style == EV_STYLE_STATUS_LINE)
		style = EV_STYLE_WARNING;
	char marked[64] = "";
	if (a->marked > 0)
		/* TRANSLATORS: the status line: how many rows are marked. */
		snprintf(marked, sizeof(marked), _(" · %d marked"), a->marked);
	char source[192] = "", lag[400] = "";
	style = status_where(a, source, sizeof(source), lag, sizeof(lag), style);
	/* What matters in an incident first: is the data live, may evtop write, is the clock
	 * right; then where it comes from. */
	/* Personal data: masked (doc/privacy.md), or said plainly that it is not. */
	const char *mask =
	        /* TRANSLATORS: the status line: personal data masked, or not (a warning). */
	        ui_mask_for(a, a->all_mode ? -1 : a->cur_source) ? _(" masked") : _(" MASK OFF");
	/* TRANSLATORS: the status line: the state, READ-ONLY or rw, the mask, warnings; the
	 * source, the server's clock, the refresh, the server, its time zone (tz). Keep it
	 * short: at 80 columns the first three are never cut. */
	snprintf(line, size, _("evtop · %s · %s%s%s%s%s · %s%s%s · %s%s · %s · tz %s%s"), state,
	         /* TRANSLATORS: the status line: writes refused (a warning), or allowed. */
	         a->cfg->read_only ? _("READ-ONLY") : _("rw"), mask, zone, stale, lag, source,
	         clock, offset, refresh, took, a->server[0] ? a->server : "…",
	         a->src->time_zone ? a->src->time_zone : "SYSTEM", marked);
	*style_out = style;
}

static void draw_status(struct app *a, int cols)
{
	char line[1024];
	int style;
	status_text(a, line, sizeof(line), &style);
	snprintf(a->drawn_status, sizeof(a->drawn_status), "%s", line);
	draw_text_pad(0, 0, cols, style, line);
}

/* Whether the status line would read differently now (its clock, how old the data is). */
static bool status_changed(struct app *a)
{
	char line[1024];
	int style;
	status_text(a, line, sizeof(line), &style);
	return strcmp(line, a->drawn_status) != 0;
}

/* An action's word in the hint bar: its name, translated (the names that scripts and
 * bindings use stay English: ev_ui_action_name). */
static const char *hint_label(enum ev_ui_action act)
{
	switch (act) {
	case EV_UA_QUIT:
		/* TRANSLATORS: the hint bar after each key ("q quit ? help"); one or two words:
		 * every hint shares one line of 80 columns. */
		return P_("hint", "quit");
	case EV_UA_HELP:
		return P_("hint", "help");
	case EV_UA_OPEN:
		return P_("hint", "open");
	case EV_UA_NEXT_TABLE:
		return P_("hint", "next-table");
	case EV_UA_DIMENSION:
		return P_("hint", "dimension");
	case EV_UA_FILTER:
		return P_("hint", "filter");
	case EV_UA_PAUSE:
		return P_("hint", "pause");
	case EV_UA_RETRY_NOW:
		return P_("hint", "retry");
	case EV_UA_RETRY_SCHEDULE:
		return P_("hint", "schedule");
	case EV_UA_CANCEL:
		return P_("hint", "cancel");
	case EV_UA_RECOVER:
		return P_("hint", "recover");
	case EV_UA_GROUP:
		return P_("hint", "group");
	case EV_UA_TRAIL:
		return P_("hint", "trail");
	case EV_UA_TRACE:
		return P_("hint", "trace");
	case EV_UA_FOLD:
		return P_("hint", "fold");
	case EV_UA_SEARCH:
		return P_("hint", "search");
	default:
		return ev_ui_action_name(act);
	}
}

static void draw_hints(struct app *a, int y, int cols)
{
	struct view *v = app_top(a);
	enum ev_ui_context ctx = v ? v->ops->ctx : EV_CTX_GLOBAL;
	char line[512] = "";
	size_t n = 0;
	for (int act = 0; act < EV_UA_COUNT; act++) {
		if (!(ev_ui_action_flags((enum ev_ui_action)act) & EV_AF_HINT))
			continue;
		const char *key = ev_keymap_key_for(ctx, (enum ev_ui_action)act);
		if (key == NULL)
			continue;
		/* Only what this screen answers: a context binding, or a global action. */
		if (ev_keymap_lookup(ctx, ev_key_parse(key)) != (enum ev_ui_action)act)
			continue;
		if ((act == EV_UA_DIMENSION) && ctx != EV_CTX_DASHBOARD)
			continue;
		if (act == EV_UA_FILTER && ctx != EV_CTX_LIST)
			continue;
		/* Write keys only where the row's status allows them, and never read-only. */
		if ((ev_ui_action_flags((enum ev_ui_action)act) & EV_AF_WRITES) &&
		    (a->cfg->read_only || v == NULL || v->ops->allows == NULL ||
		     !v->ops->allows(a, v, (enum ev_ui_action)act)))
			continue;
		n += (size_t)snprintf(line + n, sizeof(line) - n, "%s%s %s", n ? "  " : "", key,
		                      hint_label((enum ev_ui_action)act));
		if (n >= sizeof(line))
			break;
	}
	draw_text_pad(y, 0, cols, EV_STYLE_HINT, line);
}

static void draw_message(struct app *a, int y, int cols)
{
	move(y, 0);
	clrtoeol();
	if (a->prompting) {
		/* The end of what is typed stays in view, with a block for the cursor. */
		char line[sizeof(a->prompt_label) + sizeof(a->prompt_text)];
		snprintf(line, sizeof(line), "%s%s", a->prompt_label, a->prompt_text);
		char *safe = ev_text_sanitize(line, strlen(line));
		int w = ev_text_width(safe), lead = 0;
		const char *shown = safe;
		if (w > cols - 2 && cols > 3) {
			shown = safe + ev_text_skip_cols(safe, w - (cols - 3), &lead);
			draw_text(y, 0, 1, EV_STYLE_HINT, "…");
		}
		int x = w > cols - 2 && cols > 3 ? 1 + lead : 0;
		attrset(ev_term_attr(EV_STYLE_NORMAL));
		mvaddstr(y, x, shown);
		attrset(ev_term_attr(EV_STYLE_SELECTED));
		addstr(" ");
		attrset(A_NORMAL);
		free(safe);
		return;
	}
	char progress[640]; /* a translated line: 3 bytes a character, the bar too */
	if (ui_bulk_progress_line(progress, sizeof(progress), cols)) {
		draw_text(y, 0, cols, EV_STYLE_WARNING, progress);
		return;
	}
	struct view *v = app_top(a);
	if (v != NULL && v->loading > 0) {
		static const char spin[] = "|/-\\";
		long long el = app_now(a) - v->load_started;
		char line[256];
		snprintf(line, sizeof(line), _("%c loading… %.1fs (Esc cancels)"),
		         spin[(el / 250) % 4], (double)el / 1000.0);
		draw_text(y, 0, cols, EV_STYLE_WARNING, line);
		return;
	}
	if (a->msg[0])
		draw_text(y, 0, cols, a->msg_style, a->msg);
}

static void draw_all(struct app *a)
{
	int rows = LINES, cols = COLS;
	erase();
	if (rows < 6 || cols < 20) {
		draw_text(0, 0, cols, EV_STYLE_WARNING, _("evtop: terminal too small"));
		if (rows > 1)
			draw_text(1, 0, cols, EV_STYLE_NORMAL, _("(needs 20x6; q quits)"));
		wnoutrefresh(stdscr);
		doupdate();
		return;
	}
	draw_status(a, cols);
	struct view *v = app_top(a);
	if (v != NULL)
		v->ops->draw(a, v, 1, rows - 3, cols);
	draw_message(a, rows - 2, cols);
	draw_hints(a, rows - 1, cols);
	wnoutrefresh(stdscr);
	doupdate();
	a->dirty = false;
}

/* --- keys ----------------------------------------------------------------------------------- */

static void prompt_key(struct app *a, int key, bool is_char, wint_t wc)
{
	if (key == 27) {
		a->prompting = false;
	} else if (key == '\r' || key == '\n' || key == KEY_ENTER) {
		a->prompting = false;
		/* Trailing spaces are never meant (the offered text ends with one). */
		while (a->prompt_len > 0 && a->prompt_text[a->prompt_len - 1] == ' ')
			a->prompt_text[--a->prompt_len] = '\0';
		if (a->on_prompt)
			a->on_prompt(a, a->prompt_text);
	} else if (key == KEY_BACKSPACE || key == 127 || key == 8) {
		/* Remove the last UTF-8 character. */
		while (a->prompt_len > 0) {
			a->prompt_len--;
			if (((unsigned char)a->prompt_text[a->prompt_len] & 0xC0) != 0x80)
				break;
		}
		a->prompt_text[a->prompt_len] = '\0';
	} else if (key == 21) { /* C-u */
		a->prompt_len = 0;
		a->prompt_text[0] = '\0';
	} else if (is_char && wc >= 32) {
		char mb[8];
		mbstate_t st;
		memset(&st, 0, sizeof(st));
		size_t n = wcrtomb(mb, (wchar_t)wc, &st);
		if (n != (size_t)-1 && a->prompt_len + n + 1 < sizeof(a->prompt_text)) {
			memcpy(a->prompt_text + a->prompt_len, mb, n);
			a->prompt_len += n;
			a->prompt_text[a->prompt_len] = '\0';
		}
	}
	a->dirty = true;
}

static void use_source(struct app *a, int index, bool read_primary);

/* C-r, whichever view answers it: without the stretch (the refresh it starts sets it anew),
 * the next timed refresh an interval away, and a lost connection tried at once, whatever its
 * back-off. */
static void refresh_reset(struct app *a)
{
	ev_worker_retry_now(a->wdash);
	for (int i = 0; i < a->nsources; i++)
		if (a->sites[i].wlist != NULL)
			ev_worker_retry_now(a->sites[i].wlist);
	a->last_cost_ms = 0;
	for (int i = 0; i < a->nviews; i++)
		a->views[i]->last_load_ms = 0;
	a->effective_ms = a->refresh_ms;
	a->next_refresh = app_now(a) + a->refresh_ms;
	a->dirty = true;
}

static void clock_ok_done(struct app *a, const char *reason);
static void clock_ok_ask(struct app *a);

/* i, :instances: the publisher instances of the dashboard's table in focus (once). */
static void open_instances(struct app *a)
{
	struct view *top = app_top(a);
	if (top != NULL && strcmp(top->ops->name, "instances") == 0)
		return;
	if (a->nviews == 0)
		return;
	app_push(a, view_instances_new(a, ui_dash_focus(a->views[0])));
}

static void global_action(struct app *a, enum ev_ui_action act)
{
	struct view *v = app_top(a);
	switch (act) {
	case EV_UA_QUIT:
		if (a->applying) {
			app_message(a, EV_STYLE_WARNING,
			            _("an action is being applied; quit after its result"));
			break;
		}
		if (a->nviews > 1)
			app_pop(a);
		else
			a->quit = true;
		break;
	case EV_UA_BACK:
		if (v != NULL && v->loading > 0) {
			/* The whole job (every statement of a refresh), and the next refresh one
			 * interval from now, not at once on the lock it was cancelled on. */
			app_cancel(a, v);
			if (v->ops->on_timer)
				a->next_refresh = app_now(a) + a->effective_ms;
			app_message(a, EV_STYLE_WARNING, _("cancelled (KILL QUERY sent)"));
		} else if (a->nviews > 1) {
			app_pop(a);
		}
		break;
	case EV_UA_CLOCK_OK:
		clock_ok_ask(a);
		break;
	case EV_UA_HELP:
		if (v == NULL || v->ops->ctx != EV_CTX_HELP)
			app_push(a, view_help_new(a));
		break;
	case EV_UA_NEXT_SOURCE:
		if (a->nsources < 2)
			app_message(
			        a, EV_STYLE_NORMAL,
			        _("one source only (the config's [source] sections name more)"));
		else if (a->all_mode)
			use_source(a, 0, a->read_primary);
		else /* after the last source, every source at once */
			use_source(a, a->cur_source + 1 < a->nsources ? a->cur_source + 1 : -1,
			           a->read_primary);
		break;
	case EV_UA_PRIMARY:
		if (a->all_mode)
			use_source(a, -1, !a->read_primary);
		else if (!ev_source_has_replica(a->src))
			app_message(a, EV_STYLE_NORMAL,
			            _("this source has no read endpoint: everything is read on the "
			              "primary"));
		else
			use_source(a, a->cur_source, !a->read_primary);
		break;
	case EV_UA_PAUSE:
		a->paused = !a->paused;
		app_message(a, EV_STYLE_NORMAL, "%s",
		            a->paused ? _("refresh paused (p resumes)") : _("refresh resumed"));
		if (!a->paused)
			a->next_refresh = app_now(a);
		break;
	case EV_UA_FASTER:
	case EV_UA_SLOWER: {
		static const int steps[] = {500, 1000, 2000, 5000, 10000, 30000, 60000};
		int n = (int)(sizeof(steps) / sizeof(steps[0])), i = 0;
		while (i < n - 1 && steps[i] < a->refresh_ms)
			i++;
		i += act == EV_UA_FASTER ? -1 : 1;
		i = i < 0 ? 0 : i >= n ? n - 1 : i;
		a->refresh_ms = steps[i];
		a->next_refresh = app_now(a) + a->refresh_ms;
		app_message(a, EV_STYLE_NORMAL, _("refresh every %.1fs"), a->refresh_ms / 1000.0);
		break;
	}
	case EV_UA_REFRESH:
		a->next_refresh = app_now(a);
		break;
	case EV_UA_ACTIONS_LOG:
		app_push(a, view_actions_new(a));
		break;
	case EV_UA_INSTANCES:
		open_instances(a);
		break;
	case EV_UA_BULK_STOP:
		ui_bulk_stop(a);
		break;
	case EV_UA_BULK_HOLD:
		ui_bulk_hold(a);
		break;
	case EV_UA_REDRAW:
		clearok(curscr, TRUE);
		a->dirty = true;
		break;
	case EV_UA_COMMAND:
		a->msg[0] = '\0';
		break;
	default:
		break;
	}
}

/* A write refused before anything is asked: read-only, or another write being applied. */
static bool write_refused(struct app *a, enum ev_ui_action act)
{
	if (a->cfg->read_only) {
		app_message(a, EV_STYLE_WARNING,
		            /* TRANSLATORS: %s is an action's name ("retry"), as the config and
		             * :commands write it. */
		            _("read-only (--read-only or the config): %s does nothing"),
		            ev_ui_action_name(act));
		return true;
	}
	if (a->applying) {
		app_message(a, EV_STYLE_WARNING,
		            _("an action is being applied; wait for its result"));
		return true;
	}
	return false;
}

/* Every action, from a key or a ':' command, passes here, and what its flags say is checked
 * once: a write is refused read-only or while another one applies, and where no row is. */
void ev_console_dispatch(struct app *a, enum ev_ui_action act)
{
	struct view *v = app_top(a);
	unsigned flags = ev_ui_action_flags(act);
	if (flags & EV_AF_WRITES) {
		if (write_refused(a, act))
			return;
		if ((flags & EV_AF_NEEDS_ROW) && (v == NULL || v->ops->allows == NULL)) {
			app_message(a, EV_STYLE_WARNING,
			            /* TRANSLATORS: %s is an action's name ("retry"). */
			            _("%s acts on an event: open a list of events, or one event"),
			            ev_ui_action_name(act));
			return;
		}
	}
	if (act == EV_UA_COMMAND) {
		app_prompt(a, ":", "", ev_console_command);
		return;
	}
	if (act == EV_UA_REFRESH)
		refresh_reset(a);
	if (v != NULL && v->ops->action(a, v, act))
		return;
	global_action(a, act);
}

static void handle_key(struct app *a, int key, bool is_char, wint_t wc)
{
	if (a->prompting) {
		prompt_key(a, key, is_char, wc);
		return;
	}
	if (key == '\n' || key == KEY_ENTER)
		key = '\r';
	if (key == KEY_RESIZE) {
		/* curses resized itself: the terminal's cells are not what it last wrote. */
		clearok(curscr, TRUE);
		a->dirty = true;
		return;
	}
	struct view *v = app_top(a);
	enum ev_ui_action act = ev_keymap_lookup(v ? v->ops->ctx : EV_CTX_GLOBAL, key);
	/* A confirmation takes every key: anything but yes (or writing or copying the
	 * statement, or a setting of the run it shows) is No. */
	if (v != NULL && v->ops->ctx == EV_CTX_CONFIRM && act != EV_UA_YES && act != EV_UA_EXPORT &&
	    act != EV_UA_COPY && !(ev_ui_action_flags(act) & EV_AF_SETTING))
		act = EV_UA_BACK;
	if (act == EV_UA_NONE) {
		char name[32];
		/* TRANSLATORS: %s is a key's name ("F5", "C-x"). */
		app_message(a, EV_STYLE_NORMAL, _("%s: no action here (? shows the keys)"),
		            ev_key_name(key, name, sizeof(name)));
		return;
	}
	a->msg[0] = '\0';
	ev_console_dispatch(a, act);
}

/* C on the dashboard, :clock-ok alone: ask why (when there is something to allow). */
static void clock_ok_ask(struct app *a)
{
	bool suspect = false;
	for (int t = 0; t < EV_TABLE_COUNT; t++)
		suspect = suspect || a->clock_suspect[t];
	if (!suspect) {
		app_message(a, EV_STYLE_NORMAL,
		            _("clock-ok: no time zone mismatch is suspected; nothing to allow"));
		return;
	}
	if (a->clock_ok) {
		app_message(a, EV_STYLE_NORMAL,
		            _("clock-ok: writes are allowed already (audited)"));
		return;
	}
	app_prompt(a, _("clock-ok: why is the session's time zone right? "), "", clock_ok_done);
}

static void clock_ok_done(struct app *a, const char *reason)
{
	struct ev_error err = {0};
	bool ctl = false;
	size_t chars = 0;
	for (const unsigned char *p = (const unsigned char *)reason; *p; p++) {
		/* C0, DEL, and C1 (U+0080..U+009F: 0xC2 0x80..0x9F) */
		ctl = ctl || *p < 0x20 || *p == 0x7f ||
		      (p[0] == 0xC2 && p[1] >= 0x80 && p[1] <= 0x9F);
		chars += (*p & 0xC0) != 0x80;
	}
	while (*reason == ' ')
		reason++;
	if (*reason == '\0' || ctl || chars > EV_GUARD_REASON_MAX || !ev_guard_utf8_valid(reason)) {
		app_message(a, EV_STYLE_ERROR,
		            _("clock-ok: give a reason (1..%d characters, no control characters); "
		              "nothing changed"),
		            EV_GUARD_REASON_MAX);
		return;
	}
	if (a->cfg->read_only) {
		app_message(a, EV_STYLE_WARNING,
		            _("read-only (--read-only or the config): there are "
		              "no writes to allow"));
		return;
	}
	struct ev_buf why;
	ev_buf_init(&why);
	ui_dash_clock_why(a->nviews > 0 ? a->views[0] : NULL, &why);
	int rc = app_clock_ok_audit(a, reason, why.data, &err);
	ev_buf_free(&why);
	if (rc < 0) {
		app_message(a, EV_STYLE_ERROR,
		            _("clock-ok refused: the audit file cannot be written (%.*s)"),
		            app_cut(err.msg, 200), err.msg);
		return;
	}
	a->clock_ok = true;
	app_message(a, EV_STYLE_WARNING,
	            _("clock-ok (audited): writes proceed although a time zone mismatch is "
	              "suspected; the figures stay marked suspect"));
}

/* :recent [FILTER]: the dashboard's table in focus, every status, the window; a filter and
 * its payload terms as the list's / takes them. */
static void open_recent(struct app *a, const char *arg)
{
	struct ev_filter f = {0};
	struct ev_error err = {0};
	enum ev_table_kind t = ui_dash_focus(a->views[0]);
	const char *bad;
	if (ev_filter_parse(&f, arg, &err) < 0) {
		app_message(a, EV_STYLE_ERROR, "%s", err.msg);
	} else if ((bad = ev_filter_unsupported(&f, t)) != NULL) {
		/* TRANSLATORS: the table ("outbox", "message") and a column's name. */
		app_message(a, EV_STYLE_ERROR, _("the %s table has no %s column"),
		            ev_model_table_label(ev_model_table(t)), bad);
	} else {
		app_push(a, a->views[0]->site == SITE_ALL
		                    ? view_list_new_merged(a, t, EV_LIST_RECENT, &f, arg)
		                    : view_list_new_filtered(a, t, EV_LIST_RECENT, &f, arg));
	}
	ev_filter_free(&f);
}

/* :audit [FILTER]: who did what, on the source watched. */
static void open_audit(struct app *a, const char *filter_text)
{
	struct ev_audit_filter f = {0};
	struct ev_error err = {0};
	if (ev_audit_filter_parse(&f, filter_text, &err) < 0)
		/* TRANSLATORS: :audit's filter refused; %s says why. */
		app_message(a, EV_STYLE_ERROR, _("audit: %s"), err.msg);
	else
		app_push(a, view_audit_new(a, &f, filter_text));
	ev_audit_filter_free(&f);
}

/* ":" commands (keys.h's table): what has no key, and every action by name. */
void ev_console_command(struct app *a, const char *text)
{
	while (*text == ' ')
		text++;
	if (*text == '\0')
		return;
	const char *arg = "";
	enum ev_ui_command cmd = ev_ui_command_parse(text, &arg);
	switch (cmd) {
	case EV_UC_QUIT:
		if (*arg != '\0')
			break; /* not a command of its own: said below */
		a->quit = true;
		return;
	case EV_UC_INSTANCES:
		open_instances(a);
		return;
	case EV_UC_SHOW:
		if (*arg == '\0' || strlen(arg) > 64) {
			app_message(a, EV_STYLE_ERROR,
			            _("show: give an event_no (at most 64 characters)"));
			return;
		}
		app_push(a, view_detail_new_by_no(a, arg));
		return;
	case EV_UC_ALL: {
		/* An action on every row of the list on screen: a separate, explicit command. */
		enum ev_ui_action act = ev_ui_action_parse(arg);
		struct view *v = app_top(a);
		if (ev_ui_action_core(act) < 0) {
			app_message(
			        a, EV_STYLE_ERROR,
			        _("all ACTION: retry, schedule, cancel or recover, on every row of "
			          "the list on screen"));
			return;
		}
		if (v == NULL || v->ops->bulk_all == NULL) {
			app_message(a, EV_STYLE_ERROR, _("all: open a list first"));
			return;
		}
		if (write_refused(a, act))
			return;
		v->ops->bulk_all(a, v, act);
		return;
	}
	case EV_UC_SOURCE:
		if (a->nsources < 2) {
			app_message(
			        a, EV_STYLE_NORMAL,
			        _("one source only (the config's [source] sections name more)"));
			return;
		}
		if (strcmp(arg, "all") == 0) {
			use_source(a, -1, a->read_primary);
			return;
		}
		for (int i = 0; i < a->nsources; i++) {
			if (a->sources[i]->name != NULL && strcmp(a->sources[i]->name, arg) == 0) {
				use_source(a, i, a->read_primary);
				return;
			}
		}
		app_message(a, EV_STYLE_ERROR,
		            _("source: no source '%.*s' in the config (all: every "
		              "source at once)"),
		            app_cut(arg, 64), arg);
		return;
	case EV_UC_CLOCK_OK:
		if (*arg == '\0')
			clock_ok_ask(a);
		else
			clock_ok_done(a, arg);
		return;
	case EV_UC_RECENT:
		open_recent(a, arg);
		return;
	case EV_UC_AUDIT:
		open_audit(a, arg);
		return;
	case EV_UC_TRACE:
		if (*arg == '\0') {
			app_message(a, EV_STYLE_ERROR, _("trace: give a trace_id"));
			return;
		}
		app_push(a, view_trace_new(a, arg));
		return;
	case EV_UC_REFRESH: {
		long long ms;
		if (*arg == '\0')
			break; /* the refresh action: refresh now */
		if (ev_parse_duration_ms(arg, &ms) == 0 && ms >= 100 && ms <= 3600000) {
			a->refresh_ms = (int)ms;
			a->next_refresh = app_now(a);
			return;
		}
		app_message(a, EV_STYLE_ERROR, _("refresh: expected a duration like 2s or 500ms"));
		return;
	}
	default:
		break;
	}
	enum ev_ui_action act = ev_ui_action_parse(text);
	if (act != EV_UA_NONE) {
		ev_console_dispatch(a, act);
		return;
	}
	app_message(a, EV_STYLE_ERROR,
	            _("unknown command '%.*s' (? lists the commands and the actions)"),
	            app_cut(text, 60), text);
}

static void drain_keys(struct app *a)
{
	wint_t wc;
	int r;
	while ((r = get_wch(&wc)) != ERR) {
		bool is_char = r == OK;
		int key = is_char ? (wc < 128 ? (int)wc : 0x100000) : (int)wc;
		handle_key(a, key, is_char, wc);
		if (a->quit)
			return;
	}
}

static void ask_lag(struct app *a);

/* The wake-up pipes of every running worker, into p (room for 1 + 2 per source). */
static int worker_fds(const struct app *a, struct pollfd *p)
{
	int n = 0;
	p[n++] = (struct pollfd){ev_worker_fd(a->wdash), POLLIN, 0};
	for (int i = 0; i < a->nsources; i++) {
		if (a->sites[i].wlist != NULL)
			p[n++] = (struct pollfd){ev_worker_fd(a->sites[i].wlist), POLLIN, 0};
		if (a->sites[i].wwrite != NULL)
			p[n++] = (struct pollfd){ev_worker_fd(a->sites[i].wwrite), POLLIN, 0};
	}
	return n;
}

static void drain_results(struct app *a, struct ev_worker *w)
{
	struct ev_job *j;
	ev_worker_drain_fd(w);
	while ((j = ev_worker_take(w)) != NULL) {
		/* A job with its own taker: a write's outcome is never dropped, the operator
		 * must hear what the database did. */
		if (j->done != NULL) {
			j->done(a, j);
			ev_job_free(&j);
			continue;
		}
		/* A view's: a superseded result is dropped, the view asked anew since. */
		struct view *v = app_view_by_tag(a, j->tag);
		if (v != NULL && j->gen == v->gen && !j->cancelled) {
			if (v->loading > 0)
				v->loading--;
			v->last_load_ms = j->charged_ms;
			v->ops->result(a, v, j);
			a->dirty = true;
			/* Lost: the next refresh, a reconnect attempt, comes within 5 s. */
			long long retry = app_now(a) + ev_refresh_retry_ms(a->effective_ms);
			if (a->state == CONN_LOST && a->next_refresh > retry)
				a->next_refresh = retry;
		}
		ev_job_free(&j);
	}
}

/* --- the refresh timer --------------------------------------------------------------------- */

static void fire_timers(struct app *a)
{
	long long now = app_now(a);
	if (a->paused || now < a->next_refresh)
		return;
	/* Stretch the interval when evtop's own queries exceed their server-time budget. A
	 * refresh is the dashboard's queries and those of the view on top of it (a list), each
	 * charged its statements' server time (a lock wait, time limit or kill charged 0), and
	 * the stretch follows the last refresh alone, capped (core/refresh). */
	double cost = a->last_cost_ms;
	struct view *top = app_top(a);
	if (a->nviews > 1 && top != NULL && top->ops->load != NULL && top->ops->on_timer)
		cost += top->last_load_ms;
	/* A scripted run keeps to its virtual clock: real query times would make it flaky. */
	a->effective_ms =
	        a->scripted ? a->refresh_ms
	                    : ev_refresh_interval_ms(a->refresh_ms, cost, a->cfg->budget_permille);
	/* While the connection is lost, each refresh is a reconnect attempt: under 5 s apart. */
	a->next_refresh = now + (a->state == CONN_LOST ? ev_refresh_retry_ms(a->effective_ms)
	                                               : a->effective_ms);
	for (int i = 0; i < a->nviews; i++) {
		struct view *v = a->views[i];
		/* At most one refresh in flight per view. */
		if (v->ops->load != NULL && v->ops->on_timer && v->loading == 0 &&
		    (i == a->nviews - 1 || i == 0))
			v->ops->load(a, v);
	}
	ask_lag(a);
}

static int poll_timeout(struct app *a)
{
	long long now = app_now(a);
	long long until = a->paused ? 1000 : a->next_refresh - now;
	struct view *v = app_top(a);
	if (((v != NULL && v->loading > 0) || a->applying) && until > 250)
		until = 250; /* the spinner, the progress bar */
	if (until < 0)
		until = 0;
	if (until > 1000)
		until = 1000;
	return (int)until;
}

/* --- scripted runs -------------------------------------------------------------------------- */

static bool idle(struct app *a)
{
	if (ev_worker_pending(a->wdash) > 0)
		return false;
	for (int i = 0; i < a->nsources; i++)
		if ((a->sites[i].wlist && ev_worker_pending(a->sites[i].wlist) > 0) ||
		    (a->sites[i].wwrite && ev_worker_pending(a->sites[i].wwrite) > 0))
			return false;
	for (int i = 0; i < a->nviews; i++)
		if (a->views[i]->loading > 0)
			return false;
	return a->paused || app_now(a) < a->next_refresh;
}

/* Write the screen as text: one line per row, trailing spaces trimmed; a double-width
 * character occupies two cells and is written once. */
/* Row y of the screen as UTF-8 text, trailing blanks cut; its length. */
static size_t screen_line(int y, char *line, size_t size)
{
	size_t n = 0, keep = 0;
	for (int x = 0; x < COLS && n + 16 < size; x++) {
		cchar_t cc;
		wchar_t wch[CCHARW_MAX + 1];
		attr_t at;
		short pair;
		if (mvin_wch(y, x, &cc) == ERR || getcchar(&cc, wch, &at, &pair, NULL) == ERR)
			continue;
		for (int k = 0; wch[k] != L'\0'; k++) {
			mbstate_t st;
			memset(&st, 0, sizeof(st));
			size_t m = wcrtomb(line + n, wch[k], &st);
			if (m != (size_t)-1)
				n += m;
		}
		if (wch[0] != L' ')
			keep = n;
		int w = wcwidth(wch[0]);
		if (w == 2)
			x++;
	}
	line[keep] = '\0';
	return keep;
}

static int dump_screen(const char *path)
{
	FILE *f = fopen(path, "w");
	if (f == NULL)
		return -1;
	for (int y = 0; y < LINES; y++) {
		char line[4096];
		size_t n = screen_line(y, line, sizeof(line));
		fwrite(line, 1, n, f);
		fputc('\n', f);
	}
	return fclose(f);
}

/* "expect TEXT": the screen shows TEXT on one of its lines; else the run fails, saying what
 * the screen showed. */
static int expect_text(const char *text, const char *script_path)
{
	char line[4096];
	for (int y = 0; y < LINES; y++) {
		screen_line(y, line, sizeof(line));
		if (strstr(line, text) != NULL)
			return 0;
	}
	ev_say_error(_("script %s: expected '%s' on the screen, which shows:"), script_path, text);
	for (int y = 0; y < LINES; y++) {
		screen_line(y, line, sizeof(line));
		fprintf(stderr, "| %s\n", line);
	}
	return -1;
}

/* One script command. Returns -1 on a bad command (the run then fails). */
static int script_step(struct app *a, char *line, const char *script_path)
{
	char *cmd = strtok(line, " \t\r\n");
	char *rest = strtok(NULL, "\r\n");
	if (cmd == NULL || cmd[0] == '#')
		return 0;
	if (strcmp(cmd, "key") == 0 || strcmp(cmd, "keys") == 0) {
		for (char *k = strtok(rest, " \t"); k != NULL; k = strtok(NULL, " \t")) {
			int code = ev_key_parse(k);
			if (code < 0) {
				ev_say_error(_("script %s: unknown key '%s'"), script_path, k);
				return -1;
			}
			handle_key(a, code, code < KEY_MIN, (wint_t)code);
		}
		return 0;
	}
	if (strcmp(cmd, "type") == 0) {
		mbstate_t st;
		memset(&st, 0, sizeof(st));
		const char *p = rest ? rest : "";
		wchar_t wc;
		size_t n;
		while (*p && (n = mbrtowc(&wc, p, strlen(p), &st)) != (size_t)-1 &&
		       n != (size_t)-2 && n > 0) {
			handle_key(a, wc < 128 ? (int)wc : 0x100000, true, (wint_t)wc);
			p += n;
		}
		return 0;
	}
	if (strcmp(cmd, "screen") == 0) {
		if (a->dirty)
			draw_all(a);
		return rest != NULL && dump_screen(rest) == 0 ? 0 : -1;
	}
	if (strcmp(cmd, "expect") == 0) {
		if (a->dirty || a->applying) /* a write's progress moves on its own */
			draw_all(a);
		return rest != NULL ? expect_text(rest, script_path) : -1;
	}
	if (strcmp(cmd, "resize") == 0) {
		int c, r;
		if (rest == NULL || sscanf(rest, "%d %d", &c, &r) != 2)
			return -1;
		ev_term_resize(c, r);
		a->dirty = true;
		return 0;
	}
	if (strcmp(cmd, "clock") == 0) {
		long long ms;
		if (rest == NULL || rest[0] != '+' || ev_parse_duration_ms(rest + 1, &ms) < 0)
			return -1;
		a->vclock += ms;
		return 0;
	}
	if (strcmp(cmd, "shell") == 0) {
		return rest != NULL && system(rest) == 0 ? 0 : -1;
	}
	ev_say_error(_("script %s: unknown command '%s'"), script_path, cmd);
	return -1;
}

/* --- setup ----------------------------------------------------------------------------------- */

static void fatal_hook(void)
{
	ev_term_stop();
}

/* --- sources: the one watched, its read endpoint, switching ------------------------------ */

#define LAG_TAG (-3) /* the replica-lag job's tag: no view's */

struct lag_result {
	long long lag_s;
	char note[320];
};

/* On the read endpoint: how far behind the primary it is. */
static int lag_job(struct ev_conn *c, struct ev_job *job, struct ev_error *err)
{
	struct lag_result *r = ev_xcalloc(1, sizeof(*r));
	job->result = r;
	job->free_result = free;
	r->lag_s = -1;
	struct ev_rowset *rs = NULL;
	struct ev_query *q = ev_doctor_query_replica(ev_conn_server(c));
	int rc = ev_conn_run(c, q, &rs, err);
	ev_query_free(&q);
	if (rc < 0) {
		const char *why = err->code == 1227
		                          ? _("not readable (REPLICA MONITOR / REPLICATION CLIENT)")
		                          : err->msg;
		snprintf(r->note, sizeof(r->note), "%.*s", app_cut(why, 150), why);
		return 0;
	}
	r->lag_s = ev_doctor_replica_lag(rs, r->note, sizeof(r->note));
	ev_rowset_free(&rs);
	return 0;
}

/* The lag read: kept for the status line (a cancelled read is dropped). */
static void lag_done(void *ctx, struct ev_job *j)
{
	struct app *a = ctx;
	struct lag_result *r = j->result;
	if (r != NULL && !j->cancelled) {
		a->lag_s = r->lag_s;
		snprintf(a->lag_note, sizeof(a->lag_note), "%s", r->note);
		a->dirty = true;
	}
}

/* Ask the read endpoint for its lag (with each refresh). */
static void ask_lag(struct app *a)
{
	if (a->read_src == NULL || a->wdash == NULL || a->all_mode)
		return;
	ev_worker_submit(a->wdash, app_job(LAG_TAG, lag_job, NULL, NULL, lag_done));
}

/* Watch another source (or the same one read elsewhere): every view closes, the dashboard
 * opens anew on it. */
static void use_source(struct app *a, int index, bool read_primary)
{
	struct ev_error err = {0};
	if (a->applying) {
		app_message(a, EV_STYLE_WARNING,
		            _("an action is being applied; switch after its result"));
		return;
	}
	app_cancel_all(a, true);
	while (a->nviews > 0) {
		struct view *v = a->views[--a->nviews];
		app_cancel(a, v);
		v->ops->free(v);
	}
	a->marked = 0;
	app_stop_workers(a);
	for (int t = 0; t < EV_TABLE_COUNT; t++)
		a->table_note[t][0] = '\0';
	a->have_offset = false;
	a->state = CONN_CONNECTING;
	a->server[0] = a->server_now[0] = a->stale_since[0] = a->last_error[0] = '\0';
	a->last_refresh_ms = a->last_cost_ms = 0;
	a->have_ok = false;
	/* :clock-ok was said of the source left (--clock-ok holds for every source). */
	if (index != a->cur_source || (index < 0) != a->all_mode)
		a->clock_ok = a->args->clock_ok;
	a->all_mode = index < 0;
	if (index >= 0) {
		a->cur_source = index;
		a->src = a->sources[index];
	}
	a->read_primary = read_primary;
	if (app_start_workers(a, &err) < 0)
		ev_fatal(_("cannot start the workers: %s"), err.msg);
	app_push(a, view_dash_new(a));
	ask_lag(a);
	a->next_refresh = app_now(a) + a->refresh_ms;
	const char *name = a->src->name ? a->src->name : "default";
	if (a->all_mode)
		app_message(a, EV_STYLE_NORMAL,
		            /* TRANSLATORS: %s is ", read on the primaries" or nothing. */
		            _("every source at once%s; Enter: a cell's list (TOTAL: merged), d: a "
		              "source's dashboard"),
		            a->read_primary ? _(", read on the primaries") : "");
	else if (a->read_src != NULL)
		app_message(a, EV_STYLE_NORMAL,
		            _("source %s: reading its replica (P reads the primary)"), name);
	else if (ev_source_has_replica(a->src))
		app_message(a, EV_STYLE_NORMAL, _("source %s: reading the primary"), name);
	else
		/* TRANSLATORS: the source now watched; %s is its name. */
		app_message(a, EV_STYLE_NORMAL, _("source %s"), name);
	a->dirty = true;
}

/* The views the others ask for (app_open): built here, above them all. */
static struct view *console_open(struct app *a, const struct view_request *r)
{
	switch (r->what) {
	case OPEN_GROUP:
		return view_group_new(a, r->table, r->kind, r->filter, r->filter_text, r->column);
	case OPEN_TRAIL:
		return view_list_new_trail(a, r->table, r->type, r->id);
	case OPEN_DETAIL:
		return view_detail_new(a, r->table, r->event_no, r->row_id);
	case OPEN_CHART:
		return view_chart_new(a, r->table, r->total, r->group);
	}
	return NULL;
}

/* The console's state before anything is opened: which source is watched, the mode. */
static void console_init(struct app *a, const struct ev_console_args *args)
{
	memset(a, 0, sizeof(*a));
	a->args = args;
	a->cfg = args->cfg;
	a->clock_ok = args->clock_ok;
	a->src = args->src;
	a->sources = args->sources;
	a->nsources = args->nsources;
	if (a->sources == NULL || a->nsources < 1) {
		a->sources = &a->src;
		a->nsources = 1;
	}
	for (int i = 0; i < a->nsources; i++)
		if (a->sources[i] == a->src)
			a->cur_source = i;
	a->read_primary = args->primary;
	/* Several sources: every one at once first. */
	a->all_mode = a->nsources > 1;
	a->scripted = args->script != NULL;
	a->refresh_ms = a->effective_ms = a->cfg->refresh_ms;
	a->state = CONN_CONNECTING;
	a->open = console_open;
}

/* The script (--script) and the --log-sql file, opened before the terminal is taken: a
 * failure is said on stderr and the run ends with 2. */
static int open_files(const struct ev_console_args *args, FILE **script, FILE **log)
{
	struct ev_error err = {0};
	*script = *log = NULL;
	if (args->script != NULL) {
		*script = fopen(args->script, "r");
		if (*script == NULL) {
			ev_say_error(_("cannot read the script %s: %s"), args->script,
			             strerror(errno));
			return -1;
		}
	}
	if (args->log_sql != NULL) {
		/* It holds the statements' parameters: 0600, never through a link. */
		/* TRANSLATORS: what a file is, in "cannot open %s %s: …" (the path follows). */
		*log = ev_file_stream(_("the --log-sql file"), args->log_sql, EV_FILE_PRIVATE,
		                      EV_FILE_APPEND, &err);
		if (*log == NULL) {
			ev_say_error("%s", err.msg);
			if (*script)
				fclose(*script);
			*script = NULL;
			return -1;
		}
		ev_db_set_sql_log(*log);
	}
	return 0;
}

static void close_files(FILE *script, FILE *log)
{
	if (script)
		fclose(script);
	if (log) {
		ev_db_set_sql_log(NULL);
		fclose(log);
	}
}

/* Quit, hang-up and resize are flags the loop reads; a crash gives the terminal back first. */
static void take_signals(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_quit;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sa.sa_handler = on_winch;
	sigaction(SIGWINCH, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	signal(SIGSEGV, on_crash);
	signal(SIGBUS, on_crash);
	signal(SIGABRT, on_crash);
	signal(SIGFPE, on_crash);
}

/* The main loop, until quit (or the script's end): 0, or 1 when a script step failed. */
static int run_loop(struct app *a, FILE *script, struct pollfd *pfds)
{
	char line[4096];
	bool have_line = false;
	while (!a->quit) {
		if (got_quit)
			break;
		if (got_winch) {
			got_winch = 0;
			ev_term_resize(0, 0);
			a->dirty = true;
		}
		if (!a->scripted)
			drain_keys(a);
		if (a->switch_to > 0) {
			int to = a->switch_to;
			a->switch_to = 0;
			use_source(a, to - 2, a->read_primary);
		}
		drain_results(a, a->wdash);
		for (int i = 0; i < a->nsources; i++) {
			if (a->sites[i].wlist != NULL)
				drain_results(a, a->sites[i].wlist);
			if (a->sites[i].wwrite != NULL)
				drain_results(a, a->sites[i].wwrite);
		}
		fire_timers(a);
		if (!a->dirty && status_changed(a))
			a->dirty = true; /* the server's clock, the data's age */
		if (a->dirty && !a->quit)
			draw_all(a);
		if (a->scripted) {
			/* Each command waits until no query is in flight and no timer is due; one
			 * written "!command" does not (to act while a slow query runs). */
			if (!have_line) {
				if (fgets(line, sizeof(line), script) == NULL)
					break;
				have_line = true;
			}
			bool now = line[0] == '!';
			if (!now && !idle(a)) {
				poll(pfds + 1, worker_fds(a, pfds + 1), 50);
				continue;
			}
			have_line = false;
			if (script_step(a, now ? line + 1 : line, a->args->script) < 0)
				return 1;
			continue;
		}
		pfds[0] = (struct pollfd){0, POLLIN, 0};
		if (poll(pfds, 1 + worker_fds(a, pfds + 1), poll_timeout(a)) < 0 && errno != EINTR)
			break;
		if (a->views[a->nviews - 1]->loading > 0 || a->applying)
			a->dirty = true; /* the spinner, the progress bar */
	}
	return 0;
}

int ev_console_run(const struct ev_console_args *args)
{
	struct app app;
	struct app *a = &app;
	struct ev_error err = {0};
	char msg[600];
	FILE *script = NULL, *log = NULL;

	console_init(a, args);
	/* How wide the terminal draws ·, …, → and the like: the layout counts by it (set before
	 * any worker starts). */
	ev_ambiguous_set_width(a->cfg->ambiguous_width);
	/* The config's key bindings: a wrong one is a config error, named by file and line. */
	if (ev_keymap_configure(a->cfg->keys, a->cfg->nkeys, msg, sizeof(msg)) < 0) {
		ev_say_error("%s", msg);
		return 2;
	}
	if (open_files(args, &script, &log) < 0) {
		ev_keymap_reset();
		return 2;
	}

	/* The connections: dashboards on one, and per source (the watched one now; with every
	 * source at once, each when a view first needs it) lists and details on another (both on
	 * the read endpoint), guarded updates on the primary. */
	a->sites = ev_xcalloc((size_t)a->nsources, sizeof(*a->sites));
	struct pollfd *pfds = ev_xcalloc(2 + 2 * (size_t)a->nsources, sizeof(*pfds));
	bool started = false;
	if (app_start_workers(a, &err) < 0)
		ev_say_error("%s", err.msg);
	else if (ev_term_start(a->scripted ? "xterm-256color" : NULL, args->cols ? args->cols : 80,
	                       args->rows ? args->rows : 24, args->mono, msg, sizeof(msg)) < 0)
		ev_say_error("%s", msg);
	else
		started = true;
	int rc = 2;
	if (started) {
		ev_fatal_set_hook(fatal_hook);
		take_signals();
		ev_audit_ident_fill(&a->ident);
		ev_audit_time_now(a->session_start);
		a->audit_path = ev_audit_log_default_path();
		app_push(a, view_dash_new(a));
		ask_lag(a);
		a->next_refresh = app_now(a) + a->refresh_ms;
		a->dirty = true;

		rc = run_loop(a, script, pfds);

		/* Cancel whatever still runs, on the server too, before leaving (a bulk action
		 * paused between batches ends there). */
		ui_bulk_quit();
		app_cancel_all(a, false);
		while (a->nviews > 0) {
			struct view *v = a->views[--a->nviews];
			v->ops->free(v);
		}
		ev_term_stop();
		ui_write_end();
		ev_audit_ident_clear(&a->ident);
		free(a->audit_path);
	}
	ev_keymap_reset();
	app_stop_workers(a);
	ev_source_free(&a->read_src);
	free(a->sites);
	free(pfds);
	close_files(script, log);
	return rc;
}
