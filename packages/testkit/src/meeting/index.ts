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
  /** Sign-in forms posted to the stand-in, whatever their credentials. */
  signInPosts: number;
  admit(): void;
  deny(): void;
  end(): void;
  /** The bot clicked "Leave call". */
  left: number;
  /** `${origin}/participant/${code}`: a human participant joined over loopback WebRTC. */
  participantUrl: string;
  /** The WAV the participant's microphone plays when the page's `speak()` is called. */
  setParticipantVoice(wav: Buffer): void;
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
    connectMedia().catch((e) => console.error("media", e));
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
// The call's media: the in-call page offers, the participant answers (host candidates only).
async function connectMedia() {
  const mic = await navigator.mediaDevices.getUserMedia({ audio: true });
  const pc = new RTCPeerConnection();
  window.callPeer = pc;
  for (const t of mic.getAudioTracks()) pc.addTrack(t, mic);
  await pc.setLocalDescription(await pc.createOffer());
  await gathered(pc);
  await fetch("/rtc/${code}/offer", { method: "POST", body: JSON.stringify(pc.localDescription) });
  for (;;) {
    const r = await fetch("/rtc/${code}/answer");
    if (r.status === 200) return pc.setRemoteDescription(await r.json());
    await new Promise((ok) => setTimeout(ok, 100));
  }
}
${GATHERED}
`;

const GATHERED = `
function gathered(pc) {
  if (pc.iceGatheringState === "complete") return Promise.resolve();
  return new Promise((ok) => {
    pc.addEventListener("icegatheringstatechange", () => pc.iceGatheringState === "complete" && ok());
    setTimeout(ok, 3000);
  });
}`;

/**
 * A human participant: answers the in-call page's offer, speaks the configured WAV on `speak()`
 * and measures what it hears (window.heard: peak RMS of 16-bit samples, and loud milliseconds).
 */
const PARTICIPANT = (code: string) => `
const ctx = new AudioContext();
const mic = ctx.createMediaStreamDestination();
window.heard = { peakRms: 0, loudMs: 0, connected: false };
const pc = new RTCPeerConnection();
pc.onconnectionstatechange = () => { if (pc.connectionState === "connected") window.heard.connected = true; };
pc.ontrack = (e) => {
  const stream = new MediaStream([e.track]);
  const element = new Audio(); element.muted = true; element.srcObject = stream; element.play().catch(() => {});
  window.keep = element;
  const analyser = ctx.createAnalyser(); analyser.fftSize = 2048;
  ctx.createMediaStreamSource(stream).connect(analyser);
  const data = new Float32Array(analyser.fftSize);
  setInterval(() => {
    analyser.getFloatTimeDomainData(data);
    let sum = 0; for (const v of data) sum += v * v;
    const r = Math.sqrt(sum / data.length) * 32768;
    if (r > window.heard.peakRms) window.heard.peakRms = r;
    if (r > 300) window.heard.loudMs += 20;
  }, 20);
};
window.speak = async () => {
  const wav = await (await fetch("/participant/${code}/voice.wav")).arrayBuffer();
  const buffer = await ctx.decodeAudioData(wav);
  const source = ctx.createBufferSource(); source.buffer = buffer; source.connect(mic);
  await new Promise((ok) => { source.onended = ok; source.start(); });
};
${GATHERED}
window.joined = (async () => {
  await ctx.resume();
  let offer;
  for (;;) {
    const r = await fetch("/rtc/${code}/offer");
    if (r.status === 200) { offer = await r.json(); break; }
    await new Promise((ok) => setTimeout(ok, 100));
  }
  await pc.setRemoteDescription(offer);
  pc.addTrack(mic.stream.getAudioTracks()[0], mic.stream);
  await pc.setLocalDescription(await pc.createAnswer());
  await gathered(pc);
  await fetch("/rtc/${code}/answer", { method: "POST", body: JSON.stringify(pc.localDescription) });
})();
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
  const stand = { asks: [] as string[], signIns: 0, signInPosts: 0, left: 0 };
  const rtc: { offer?: string; answer?: string } = {};
  let voice: Buffer | undefined;

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
      stand.signInPosts++;
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
    // Signalling between the in-call page and the participant: one offer, one answer.
    if (url.pathname === `/rtc/${code}/offer` || url.pathname === `/rtc/${code}/answer`) {
      const kind = url.pathname.endsWith("offer") ? "offer" : "answer";
      if (req.method === "POST") {
        rtc[kind] = await body(req);
        // A new offer starts a new exchange.
        if (kind === "offer") rtc.answer = undefined;
        res.writeHead(204);
        return res.end();
      }
      const value = rtc[kind];
      if (!value) {
        res.writeHead(204);
        return res.end();
      }
      res.writeHead(200, { "content-type": "application/json" });
      return res.end(value);
    }
    if (url.pathname === `/participant/${code}/voice.wav` && voice) {
      res.writeHead(200, { "content-type": "audio/wav" });
      return res.end(voice);
    }
    if (url.pathname === `/participant/${code}`) {
      return html(200, page("Participant", `<h1>Participant</h1><script>${PARTICIPANT(code)}</script>`));
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
    get signInPosts() {
      return stand.signInPosts;
    },
    get left() {
      return stand.left;
    },
    participantUrl: `${origin}/participant/${code}`,
    setParticipantVoice(wav) {
      voice = wav;
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
