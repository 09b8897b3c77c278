"""The "Operators v2" steps of scripts/console-browser-test (console_steps.run calls them in order): the schema dry
run's per-user impact with before/after drawings, the Users screen, the history's actors, revert targets and schema
entry with view and diff, a 412 answered with a reload, the live user screen (a device's PATCH within 2 s, export,
erase), operator tokens (a read-scope one refused a rotation), the audit log, idle sign-out and the skip link."""
import json, os, time

from console_steps import DRAWN, UNLABELLED, element_shot, open_screen, shot, sign_in

# Heading levels in document order never skip one going down (an h5 straight after an h3).
HEADING_SKIPS = """() => {
  const levels = [...document.querySelectorAll('h1, h2, h3, h4, h5, h6')].filter((e) => e.getClientRects().length)
    .map((e) => [+e.tagName.slice(1), e.textContent.slice(0, 40)]);
  return levels.filter(([level], i) => i > 0 && level > levels[i - 1][0] + 1).map(([level, text]) => `h${level} ${text}`);
}"""


def impact_rows(page):
    return page.eval_on_selector_all("#impact-users tbody tr", """(rs) => rs.map((r) => ({user: r.dataset.userId,
      dropped: r.querySelector('[data-field=dropped]').textContent, reset: r.querySelector('[data-field=reset]').textContent,
      orders: r.querySelector('[data-field=orders]').textContent, dynamic: r.querySelector('[data-field=dynamic]').textContent}))""")


def wanted_rows(users):
    join = lambda ids: ", ".join(ids) if ids else "—"
    return [{"user": u["userId"], "dropped": join(u["droppedIds"]), "reset": join(u["visibilityReset"]),
             "orders": join(u["ordersChanged"] + (["tab bar"] if u["tabBarOrderChanged"] else [])), "dynamic": str(u["dynamicTabsDropped"])} for u in users]


def drawn_pair(page, user):
    pair = page.query_selector(f"#impact-pairs .impact-pair[data-user-id='{user}']")
    if pair is None:
        return None
    return {"agrees": pair.get_attribute("data-preview-agrees"),
            "before": pair.query_selector("[data-side=before] figure").evaluate(DRAWN),
            "after": pair.query_selector("[data-side=after] figure").evaluate(DRAWN)}


def every_id(drawn):
    return set(drawn["sidebar"] + drawn["tabBar"] + drawn["pinned"] + drawn["more"] + drawn["hidden"])


def v2_impact(page, checks, report):
    """The v2 dry run (Garage removed, Alerts' tab bar behaviour disabled): alice loses Garage, bob's hidden Alerts resets."""
    check = checks.check
    page.wait_for_selector("#impact-users tbody tr")
    rows = impact_rows(page)
    check(rows == wanted_rows(report["affectedUsers"]) and [r["user"] for r in rows] == ["alice", "bob"],
          f"the dry run lists each affected user with what changes for them, as the API's report ({rows})")
    check(page.inner_text("#impact-title") == f"Affected users ({report['customizationsAffected']})", "with the affected count in its heading")
    page.wait_for_function("() => document.querySelectorAll('#impact-pairs .impact-pair').length === 2")
    alice = drawn_pair(page, "alice")
    check(alice["agrees"] == "true" and drawn_pair(page, "bob")["agrees"] == "true",
          "the console resolves the current version as the server does for both (its 'after' is made the same way)")
    check("demo.garage" in alice["before"]["hidden"] and "demo.garage" not in every_id(alice["after"]) and "demo.energy" in every_id(alice["after"]),
          f"alice before: Garage hidden; after: no Garage, Energy there ({alice['after']['sidebar']})")
    bob = drawn_pair(page, "bob")
    check("demo.alerts" not in bob["before"]["tabBar"] and "demo.alerts" in bob["after"]["tabBar"],
          "bob before: Alerts out of the tab bar; after: back in it (his choice resets: the tab bar can no longer hide it)")


def title_only(page, base, admin, checks, app, schema_v2, api):
    check = checks.check
    print("== schemas: a title-only change reports 0 affected")
    titled = json.loads(json.dumps(schema_v2))
    next(item for item in titled["items"] if item["id"] == "demo.home")["title"] = "Start"
    page.fill("#schema-json", json.dumps(titled, indent=2))
    page.click("#dry-run-schema")
    page.wait_for_selector("#impact-none")
    _, report = api(base, "PUT", f"/v1/apps/{app}/schema?dryRun=true", admin, titled)
    check(report["customizationsAffected"] == 0 and page.inner_text("#count-affected") == "0" and page.query_selector("#impact-users") is None,
          "a title-only dry run reports 0 affected users, and lists none")


def removal(page, base, admin, checks, args, app, api, users):
    """v2 without Energy: exactly the users whose stored choices hid Energy are affected, each drawn before and after."""
    check = checks.check
    print("== schemas: a removal reports exactly the users who hid the removed tab")
    _, current = api(base, "GET", f"/v1/apps/{app}/schema", admin)
    smaller = {"items": current["items"], "customizablePlatforms": current["customizablePlatforms"]}
    rooms = next(item for item in smaller["items"] if item["id"] == "demo.rooms")
    rooms["tabs"] = [tab for tab in rooms["tabs"] if tab["id"] != "demo.energy"]
    hid = []
    for user in users:
        tabs = api(base, "GET", f"/v1/apps/{app}/users/{user}/customization", admin)[1]["tabs"]
        if "hidden" in (tabs.get("demo.energy", {}).get("sidebarVisibility"), tabs.get("demo.energy", {}).get("tabBarVisibility")):
            hid.append(user)
    open_screen(page, base, f"#/schemas/{app}")
    page.fill("#schema-json", json.dumps(smaller, indent=2))
    page.click("#dry-run-schema")
    page.wait_for_selector("#impact-users tbody tr")
    _, report = api(base, "PUT", f"/v1/apps/{app}/schema?dryRun=true", admin, smaller)
    rows = impact_rows(page)
    check(sorted(hid) == hid and hid == ["user-00", "user-01", "user-02"] and [r["user"] for r in rows] == hid
          and page.inner_text("#count-affected") == str(len(hid)) == str(report["customizationsAffected"]),
          f"removing Energy affects exactly the users who hid it ({[r['user'] for r in rows]})")
    check(all(r["dropped"] == "demo.energy" and r["reset"] == "—" for r in rows), "each loses their choice about demo.energy, nothing else")
    page.wait_for_function("() => document.querySelectorAll('#impact-pairs .impact-pair').length === 3")
    pairs = {user: drawn_pair(page, user) for user in hid}
    check(all(p["agrees"] == "true" for p in pairs.values()), "the console's resolution of the current version agrees with the server's for each")
    check(all("demo.energy" in p["before"]["hidden"] and "demo.energy" not in every_id(p["after"]) for p in pairs.values()),
          "each drawn before (Energy not shown) and after (no Energy at all), side by side")
    check(page.evaluate(HEADING_SKIPS) == [], f"the report's headings skip no level ({page.evaluate(HEADING_SKIPS)})")
    shot(page, args, "16-impact-report")
    element_shot(page, "[data-testid=dry-run-report]", args, "16-impact-report-card", "impact-report.png")

    print("== schemas: the affected users a page at a time")
    _, fresh = api(base, "GET", f"/v1/apps/{app}/schema", admin)
    wider = {"items": [item for item in fresh["items"] if item["id"] not in ("demo.settings", "demo.inbox")],
             "customizablePlatforms": fresh["customizablePlatforms"]}
    _, everyone = api(base, "PUT", f"/v1/apps/{app}/schema?dryRun=true&limit=100", admin, wider)
    page.fill("#schema-json", json.dumps(wider, indent=2))
    page.click("#dry-run-schema")
    page.wait_for_function("() => document.querySelectorAll('#impact-users tbody tr').length === 10")
    first = [r["user"] for r in impact_rows(page)]
    page.click("#impact-more-users")
    page.wait_for_function("() => document.querySelectorAll('#impact-users tbody tr').length > 10")
    rows = impact_rows(page)
    check(everyone["customizationsAffected"] > 10 and first == [u["userId"] for u in everyone["affectedUsers"][:10]]
          and rows == wanted_rows(everyone["affectedUsers"]) and page.query_selector("#impact-more-users") is None,
          f"removing Settings and Inbox: 10 affected users a page, More affected users reads the rest ({len(rows)}, the last {rows[-1]['user']})")


def users_screen(page, base, admin, checks, args, app, api):
    check = checks.check
    print("== users: a list by prefix, a page at a time")
    open_screen(page, base, f"#/users/{app}")
    page.wait_for_selector("#users-table")
    listed = lambda: page.eval_on_selector_all("#users-table tbody tr", "(rs) => rs.map((r) => r.dataset.userId)")
    _, everyone = api(base, "GET", f"/v1/apps/{app}/users?limit=100", admin)
    ids = [u["userId"] for u in everyone["items"]]
    check(listed() == ids[:20] and ids == sorted(ids, key=lambda i: i.encode()), f"the users with a stored customization, in byte order ({len(ids)})")
    row = page.inner_text(f"#users-table tr[data-user-id='alice']")
    alice = next(u for u in everyone["items"] if u["userId"] == "alice")
    check(f"r{alice['revision']}" in row and f"v{alice['schemaVersion']}" in row, "each with its revision and the version that last wrote it")
    page.select_option("#user-page-size", "10")
    page.fill("#user-prefix", "user-")
    page.click("#users-search button[type=submit]")
    page.wait_for_function("() => document.querySelector('#users-table caption')?.textContent.includes('\"user-\"')")
    first = listed()
    page.click("#users-next")
    page.wait_for_selector("#users-table caption:has-text('page 2')")
    second = listed()
    users = [i for i in ids if i.startswith("user-")]
    check(first == users[:10] and second == users[10:] and page.is_disabled("#users-next"), f"the prefix user- ten to a page, then the rest ({second})")
    page.click("#users-previous")
    page.wait_for_selector("#users-table caption:has-text('page 1')")
    check(listed() == first, "and Previous page goes back")
    labels = page.eval_on_selector_all("#users-table tbody button", "(bs) => bs.map((b) => b.getAttribute('aria-label'))")
    check(all(label and any(u in label for u in first) for label in labels), "each row's buttons name their user for screen readers")
    shot(page, args, "17-users")
    page.fill("#user-prefix", "nobody")
    page.click("#users-search button[type=submit]")
    page.wait_for_selector("#users-list .status")
    check("nothing stored is not listed" in page.inner_text("#users-list"), "a prefix no stored user has says so (and that users with nothing stored are not listed)")
    open_screen(page, base, f"#/user/{app}/nobody")
    page.wait_for_selector("#layout-drawings figure[data-size-class=compact]")
    captions = page.eval_on_selector_all("#layout-drawings figcaption", "(cs) => cs.map((c) => c.textContent)")
    check(page.is_visible("#nothing-stored") and all("nothing stored" in c and "choices applied" not in c for c in captions),
          f"a user with nothing stored is shown as such, not as 'revision 0, the user's choices applied' ({captions[0][:90]})")


def bob_history(page, base, admin, checks, app, api):
    """Before the revert: the schema entry, who wrote each revision, a kept revision viewed, two compared, Esc."""
    check = checks.check
    _, history = api(base, "GET", f"/v1/apps/{app}/users/bob/customization/history", admin)
    entry = history["items"][0]
    check(entry["change"] == "schema" and entry["schemaVersion"] == 2 and entry["reset"] == ["demo.alerts"], f"the API derives bob's schema entry ({entry})")
    shown = page.inner_text("#history-list li[data-change=schema]")
    check(shown.startswith("schema v2 reset demo.alerts"), f"bob's history shows the schema entry ({shown[:60]!r})")
    actors = page.eval_on_selector_all("#history-list li[data-revision] .actor", "(as) => as.map((a) => a.textContent)")
    check(actors and all(a == "by bob (the user)" for a in actors), f"each revision names its actor ({actors})")
    page.click("#history-list li[data-revision='1'] button[data-action=view]")
    page.wait_for_selector("#revision-json")
    first = next(item for item in history["items"] if item.get("revision") == 1 and item["change"] != "schema")
    check(json.loads(page.text_content("#revision-json")) == first["customization"], "View shows a kept revision's whole customization")
    page.select_option("#diff-from", "1")
    page.select_option("#diff-to", "2")
    page.click("#diff-compare")
    page.wait_for_selector("#revision-diff-list li")
    diff = page.eval_on_selector_all("#revision-diff-list li", "(ls) => ls.map((l) => l.textContent)")
    check(diff == ["sidebar visibility demo.kitchen: automatic → hidden"], f"two revisions compared choice by choice ({diff})")
    page.click("#history-list li[data-revision='1'] button[data-action=revert]")
    page.wait_for_selector("#revert-confirm [data-dialog]")
    page.keyboard.press("Escape")
    page.wait_for_function("() => !document.querySelector('#revert-confirm [data-dialog]')")
    check(page.evaluate("() => document.activeElement.dataset.action") == "revert", "Esc closes the confirmation (focus back on the button that opened it)")


def after_revert(page, base, admin, checks, app, api, bob_token):
    check = checks.check
    top = page.eval_on_selector_all("#history-list li[data-revision]", "(ls) => ls[0].textContent")
    check("revert to r1" in top and "by operator bootstrap" in top, f"the revert reads 'revert to r1 by operator bootstrap' ({top[:70]!r})")
    print("== a user: a write meanwhile (412) is answered with a reload")
    status, _ = api(base, "PATCH", f"/v1/apps/{app}/users/bob/customization", bob_token,
                    {"operations": [{"op": "setSidebarVisibility", "tab": "demo.garden", "visibility": "hidden"}]})
    check(status == 200, "bob's device writes after the screen was drawn")
    page.click("#history-list li[data-revision='1'] button[data-action=revert]")
    page.click("#revert-confirm #confirm-revert")
    page.wait_for_selector("[data-testid=revert-conflict]")
    revision = api(base, "GET", f"/v1/apps/{app}/users/bob/customization", admin)[1]["revision"]
    check(f"r{revision} now" in page.inner_text("[data-testid=revert-conflict]"), "the 412 says the customization changed, and its revision now")
    page.click("#reload-user")
    page.wait_for_selector(f"#history-list li[data-revision='{revision}'] .badge:has-text('current')")
    check(page.inner_text("#user-revision") == str(revision), "Reload the user reads it again: the device's revision is the current one")


def live(page, base, admin, checks, args, app, api, token):
    check = checks.check
    print("== live: a device's PATCH within 2 s, export, erase")
    open_screen(page, base, f"#/live/{app}/alice")
    page.wait_for_selector("#live-state[data-state=live]")
    page.wait_for_selector("#live-revision")
    before = api(base, "GET", f"/v1/apps/{app}/users/alice/customization", admin)[1]["revision"]
    page.wait_for_function(f"() => document.querySelector('#live-revision').textContent === '{before}'")
    started = time.monotonic()
    status, answer = api(base, "PATCH", f"/v1/apps/{app}/users/alice/customization", token,
                         {"operations": [{"op": "setSidebarVisibility", "tab": "demo.energy", "visibility": "hidden"}]})
    page.wait_for_function(f"() => document.querySelector('#live-revision').textContent === '{answer['revision']}'", timeout=5000)
    took = time.monotonic() - started
    check(status == 200 and took < 2, f"a device's PATCH (a user JWT) shows on the live screen in {took:.2f} s (< 2 s)")
    check(page.query_selector(f"#live-log li[data-revision='{answer['revision']}']") is not None, "and is added to the events received")
    shot(page, args, "18-live")
    with page.expect_download() as info:
        page.click("#export-user")
    download = info.value
    exported = json.load(open(download.path()))
    _, wanted = api(base, "GET", f"/v1/apps/{app}/users/alice/export", admin)
    check(exported["userId"] == "alice" and exported["customization"] == wanted["customization"] and len(exported["history"]) == len(wanted["history"]),
          f"Export downloads the user's export as JSON ({download.suggested_filename})")
    api(base, "PATCH", f"/v1/apps/{app}/users/erase-me/customization", admin, {"operations": [{"op": "setSidebarVisibility", "tab": "demo.alerts", "visibility": "hidden"}]})
    open_screen(page, base, f"#/live/{app}/erase-me")
    page.wait_for_function("() => document.querySelector('#live-revision')?.textContent === '1'")
    page.click("#erase-user")
    page.fill("#erase-confirm-id", "erase-m")
    check(page.is_disabled("#confirm-erase"), "Erase stays disabled until the user id is typed exactly")
    page.keyboard.press("Escape")
    check(page.query_selector("#erase-panel [data-dialog]") is None and api(base, "GET", f"/v1/apps/{app}/users/erase-me/customization", admin)[1]["revision"] == 1,
          "Esc closes the erase confirmation, nothing erased")
    page.click("#erase-user")
    page.fill("#erase-confirm-id", "erase-me")
    page.click("#confirm-erase")
    page.wait_for_selector("#erase-panel .status")
    page.wait_for_function("() => document.querySelector('#live-revision').textContent.startsWith('0')", timeout=5000)
    check(api(base, "GET", f"/v1/apps/{app}/users/erase-me/customization", admin)[1]["revision"] == 0,
          "the typed confirmation erases the user; the feed shows the empty customization")


def audit_and_tokens(browser, page, base, admin, checks, args, app, api):
    check = checks.check
    print("== audit: the rotation with its actor and app")
    open_screen(page, base, f"#/audit")
    page.fill("#audit-app", app)
    page.fill("#audit-actor", "bootstrap")
    page.click("#audit-filter button[type=submit]")
    page.wait_for_selector("#audit-table tr[data-action='POST /v1/apps/{appId}/signing-secret']")
    _, log = api(base, "GET", f"/v1/audit?app={app}&actor=bootstrap&limit=25", admin)
    rows = page.eval_on_selector_all("#audit-table tbody tr", "(rs) => rs.map((r) => [+r.dataset.seq, r.dataset.actor, r.dataset.action, r.dataset.appId])")
    check(rows == [[e["seq"], e["actor"], e["action"], e.get("appId", "")] for e in log["items"]], f"the audit screen lists the API's entries, newest first ({len(rows)})")
    rotation = [r for r in rows if r[2] == "POST /v1/apps/{appId}/signing-secret"]
    check(rotation and rotation[0][1] == "bootstrap" and rotation[0][3] == app, f"with the rotation, its actor and its app ({rotation[:1]})")
    shot(page, args, "19-audit")
    open_screen(page, base, f"#/audit/{app}")
    page.wait_for_selector("#audit-table")
    element_shot(page, "#screen", args, "19-audit-screen", "audit.png")

    print("== operator tokens: create (shown once), a read-scope token refused a rotation, revoke")
    open_screen(page, base, "#/tokens")
    page.fill("#token-name", "support-read")
    page.select_option("#token-scope", "read")
    page.click("#create-token button[type=submit]")
    page.wait_for_selector("#token-value")
    read_token = page.input_value("#token-value")
    check(len(read_token) >= 32 and "shown only this once" in page.inner_text("#token-panel"), "creating a token shows it once, with a warning")
    page.wait_for_selector("#tokens-table tr[data-token-name='support-read']")
    check("read" in page.inner_text("#tokens-table tr[data-token-name='support-read']"), "the list shows its name and scope")
    reader = browser.new_context(viewport={"width": 1280, "height": 900})
    other = reader.new_page()
    sign_in(other, base, read_token)
    open_screen(other, base, "#/apps")
    other.click(f"tr[data-app-id='{app}'] button[data-action=rotate]")
    other.click("#confirm-rotate")
    other.wait_for_selector("[data-testid=problem-detail]")
    status, problem = api(base, "POST", f"/v1/apps/{app}/signing-secret", read_token)
    check(status == 403 and "(403)" in other.inner_text("#problem") and other.inner_text("[data-testid=problem-detail]") == problem["detail"],
          f"a read-scope token cannot rotate a secret: the console shows the 403's problem ({problem['detail']!r})")
    check(other.query_selector("#secret-value") is None and "read scope" in other.inner_text("#whoami"), "no secret shown; the header says the token is read-only")
    check(other.evaluate("() => document.activeElement.id") == "problem", "the refusal has the focus (and is scrolled into view), wherever the button was")
    shot(other, args, "20-read-scope-refused")
    reader.close()
    open_screen(page, base, "#/tokens")
    page.click("#tokens-table tr[data-token-name='support-read'] button[data-action=revoke]")
    page.keyboard.press("Escape")
    check(page.query_selector("#token-confirm [data-dialog]") is None and api(base, "GET", "/v1/apps?limit=1", read_token)[0] == 200, "Esc cancels the revoke")
    page.click("#tokens-table tr[data-token-name='support-read'] button[data-action=revoke]")
    page.click("#confirm-revoke")
    page.wait_for_selector("#token-confirm .status")
    check(api(base, "GET", "/v1/apps?limit=1", read_token)[0] == 401 and page.query_selector("#tokens-table tr[data-token-name='support-read']") is None,
          "Revoke ends the token at once and takes it off the list")


def small_things(browser, page, base, admin, checks, args, app):
    check = checks.check
    print("== skip link, row labels, bar titles, idle sign-out")
    open_screen(page, base, f"#/schemas/{app}")
    page.fill("#schema-json", '{"items": []}  ')
    page.focus(".skip")
    page.keyboard.press("Enter")
    page.wait_for_timeout(200)
    state = page.evaluate("() => ({focus: document.activeElement.id, hash: location.hash, text: document.querySelector('#schema-json')?.value})")
    check(state == {"focus": "main", "hash": f"#/schemas/{app}", "text": '{"items": []}  '},
          f"Skip to content focuses the main region and stays on the screen, the pasted JSON kept ({state['focus']}, {state['hash']})")
    open_screen(page, base, "#/apps")
    page.wait_for_selector("#apps-table")
    unnamed = page.eval_on_selector_all("#apps-table tbody tr", """(rs) => rs.flatMap((r) => [...r.querySelectorAll('button')]
      .filter((b) => !(b.getAttribute('aria-label') || '').includes(r.dataset.appId)).map((b) => r.dataset.appId + ' ' + b.textContent))""")
    check(unnamed == [], f"every per-row button names its app for screen readers ({unnamed[:3]})")
    bar = page.evaluate("""async () => {
      const { drawLayout } = await import('/console/layout-drawing.js');
      const tab = (id, title) => ({ kind: 'tab', id, title, systemImage: 'bell' });
      const figure = drawLayout({ sizeClass: 'compact', platform: 'iOS', revision: 1, customizationApplied: true, sidebar: [], pinned: [], hidden: [],
        tabBar: [tab('a', 'Notifications'), tab('b', 'Subscriptions'), tab('c', 'Recommendations'), tab('d', 'Home')], more: [tab('e', 'Settings')] });
      document.querySelector('#screen').append(figure);
      const titles = [...figure.querySelectorAll('.tabbar .tab-title')];
      const lines = titles.map((t) => { const r = document.createRange(); r.selectNodeContents(t); return new Set([...r.getClientRects()].map((b) => Math.round(b.top))).size; });
      const out = { lines, tips: titles.map((t) => t.title), device: figure.dataset.device, phone: !!figure.querySelector('.device-phone') };
      figure.remove();
      return out;
    }""")
    check(all(n == 1 for n in bar["lines"]) and bar["tips"][:3] == ["Notifications", "Subscriptions", "Recommendations"],
          f"bar titles never break inside a word: one line each, the whole title as a tooltip ({bar['lines']})")

    idle = browser.new_context(viewport={"width": 1280, "height": 900})
    quiet = idle.new_page()
    quiet.goto(base + "/console?idle=2#/apps")
    quiet.fill("#token", admin)
    quiet.press("#token", "Enter")
    quiet.wait_for_selector("#nav:not([hidden])")
    check("Signed in as operator" in quiet.inner_text("#whoami"), "the header says who is signed in (an operator: the API has no who-am-I)")
    quiet.wait_for_selector("#login:not([hidden])", timeout=6000)
    gone = quiet.evaluate("() => Object.keys(sessionStorage).length")
    check(gone == 0 and "without activity" in quiet.inner_text("#session-notice"), "after the idle period (?idle=2 here; 15 minutes by default) the console signs out and says why")
    idle.close()

    slash = browser.new_page()
    answer = slash.goto(base + "/console/")
    slash.wait_for_selector("#login:not([hidden])")
    check(answer.status == 200, "/console/ (a trailing slash) opens the console too")
    slash.close()


def ios_regular(page, checks):
    """With Platform iOS the regular size class is an iPhone (its bottom bar), drawn and labelled as one."""
    figure = page.query_selector("#layout-drawings figure[data-size-class=regular]")
    shape = figure.evaluate("""(f) => ({ device: f.dataset.device, phone: !!f.querySelector('.device-phone'), bottom: !!f.querySelector('.tabbar.bottom'),
      caption: f.querySelector('figcaption strong').textContent,
      rows: new Set([...f.querySelectorAll('[data-part=tabbar] .bar-tabs > li')].map((l) => Math.round(l.getBoundingClientRect().top))).size })""")
    checks.check(shape["device"] == "iPhone" and shape["phone"] and shape["bottom"] and shape["rows"] == 1 and shape["caption"].startswith("iPhone"),
                 f"iOS regular is drawn as an iPhone with its bar along the bottom, not a strip in an iPad frame ({shape})")


def headings(page, checks, route):
    skips = page.evaluate(HEADING_SKIPS)
    checks.check(skips == [], f"the headings of {route} skip no level ({skips})")


def narrow_screens(phone, base, checks, args, app):
    for name, hash_ in [("users", f"#/users/{app}"), ("tokens", "#/tokens"), ("audit", "#/audit")]:
        open_screen(phone, base, hash_)
        phone.wait_for_load_state("networkidle")
        width = phone.evaluate("() => document.documentElement.scrollWidth")
        checks.check(width <= 375, f"{name} fits 375 px without sideways scrolling ({width} px)")
        checks.check(phone.evaluate(UNLABELLED) == [], f"every control of the {name} screen has a label")
        shot(phone, args, f"10-narrow-{name}")
    open_screen(phone, base, f"#/live/{app}/alice")
    phone.wait_for_selector("#live-revision")
    checks.check(phone.evaluate("() => document.documentElement.scrollWidth") <= 375 and phone.evaluate(UNLABELLED) == [],
                 "the live screen fits 375 px and every control has a label")
    shot(phone, args, "10-narrow-live")
