import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";

export type StandInMeetingState = "idle" | "waiting" | "admitted" | "denied" | "ended";

export interface MeetingStandIn {
  /** Origin, e.g. http://127.0.0.1:1234; the meeting is `${origin}/${code}`. */
  origin: string;
  host: string;
  code: string;
  meetingUrl: string;
  state(): StandInMeetingState;
  /** Names that asked to join, in order. */
  asks: string[];
  signIns: number;
  admit(): void;
  deny(): void;
  end(): void;
  /** The bot clicked "Leave call". */
  left: number;
  close(): Promise<void>;
}

const page = (title: string, body: string) =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title></head><body>${body}</body></html>`;

/** The in-page script: ask to join, then follow the state the test flips. */
const SCRIPT = (code: string) => `
const api = "/api/${code}";
const view = document.getElementById("view");
async function ask() {
  const name = document.getElementById("name").value;
  await fetch(api + "/ask", { method: "POST", body: name });
  poll();
}
let left = false;
function show(html) { view.innerHTML = html; }
async function poll() {
  const state = await (await fetch(api + "/state")).text();
  if (state === "waiting") show('<p>Asking to be let in…</p>');
  if (state === "admitted" && !document.getElementById("leave")) {
    show('<h1>In call</h1><button id="leave" aria-label="Leave call">☎</button>');
    document.getElementById("leave").onclick = async () => {
      left = true;
      await fetch(api + "/leave", { method: "POST" });
      show('<p>You left the meeting</p>');
    };
  }
  if (state === "denied") return show("<p>Someone in the call denied your request to join</p>");
  if (state === "ended") return show("<p>The call has ended</p>");
  if (left) return;
  setTimeout(poll, 150);
}
document.getElementById("ask").onclick = ask;
`;

async function body(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

/**
 * A local stand-in of a video meeting service's web app: a sign-in form, a pre-join page with a
 * name field and "Ask to join", a waiting room, an in-call view with "Leave call", and the denial
 * and end texts. The test flips the meeting's state (admit, deny, end).
 */
export async function startMeetingStandIn(account: { email: string; password: string }): Promise<MeetingStandIn> {
  const code = "abc-defg-hij";
  const sessions = new Set<string>();
  let state: StandInMeetingState = "idle";
  // admit()/deny() before a request decide the next one; while one waits they decide it now.
  let preset: StandInMeetingState | undefined;
  const decide = (next: StandInMeetingState) => {
    if (state === "waiting") state = next;
    else preset = next;
  };
  const stand = { asks: [] as string[], signIns: 0, left: 0 };

  const server = createServer(async (req, res) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    const sid = /(?:^|;\s*)sid=([^;]+)/.exec(req.headers.cookie ?? "")?.[1];
    const signedIn = sid !== undefined && sessions.has(sid);
    const html = (status: number, text: string) => {
      res.writeHead(status, { "content-type": "text/html; charset=utf-8" });
      res.end(text);
    };
    if (url.pathname === "/signin" && req.method === "POST") {
      const form = new URLSearchParams(await body(req));
      if (form.get("email") !== account.email || form.get("password") !== account.password) {
        return html(401, page("Sign in", "<p>Wrong password. Try again.</p>"));
      }
      const id = randomUUID();
      sessions.add(id);
      stand.signIns++;
      // A lasting cookie, as the real accounts service sets: a persistent profile keeps it.
      res.writeHead(303, {
        location: form.get("continue") ?? "/",
        "set-cookie": `sid=${id}; Path=/; Max-Age=86400; HttpOnly`,
      });
      return res.end();
    }
    if (url.pathname === `/${code}`) {
      if (!signedIn) {
        return html(
          200,
          page(
            "Sign in",
            `<h1>Sign in</h1><form method="post" action="/signin"><input type="hidden" name="continue" value="/${code}">
<label>Email <input name="email" type="email"></label><label>Password <input name="password" type="password"></label>
<button type="submit">Sign in</button></form>`,
          ),
        );
      }
      return html(
        200,
        page(
          "Meeting",
          `<div id="view"><h1>Ready to join?</h1><label>Your name <input id="name"></label><button id="ask">Ask to join</button></div><script>${SCRIPT(code)}</script>`,
        ),
      );
    }
    if (url.pathname.startsWith(`/api/${code}/`) && signedIn) {
      const action = url.pathname.slice(`/api/${code}/`.length);
      if (action === "ask" && req.method === "POST") {
        stand.asks.push(await body(req));
        state = preset ?? "waiting";
        preset = undefined;
      }
      if (action === "leave" && req.method === "POST") stand.left++;
      res.writeHead(200, { "content-type": "text/plain" });
      return res.end(state);
    }
    html(404, page("Not found", "<p>Check your meeting code</p>"));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const origin = `http://127.0.0.1:${port}`;
  return {
    origin,
    host: `127.0.0.1:${port}`,
    code,
    meetingUrl: `${origin}/${code}`,
    state: () => state,
    get asks() {
      return stand.asks;
    },
    get signIns() {
      return stand.signIns;
    },
    get left() {
      return stand.left;
    },
    admit: () => decide("admitted"),
    deny: () => decide("denied"),
    end: () => {
      state = "ended";
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
