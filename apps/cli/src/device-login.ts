// `auth login` without --with-token: RFC 8628 device authorization. An installation not activated
// yet runs its activation flow (the person enters the setup code on /activate) and hands over the
// owner token; an activated one runs the sign-in device flow, which mints a token of the person.
import { spawn } from "node:child_process";
import { ProblemError } from "@agentplane/sdk";
import { clientFor, type Io } from "./context.ts";
import { CliError, EXIT } from "./exit-codes.ts";
import { printableLine } from "./printable.ts";

export interface DeviceLoginResult {
  token: string;
  tokenId?: string;
  via: "device" | "activation";
}

interface DeviceStart {
  userCode: string;
  verificationUri: string;
  verificationUriComplete: string;
  expiresIn: number;
  interval: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The poll interval and how long to poll, as the server asked but within bounds: an interval of 0
 * would poll in a tight loop, and an endless expiry would wait forever.
 */
const MIN_INTERVAL_S = 1;
const MAX_INTERVAL_S = 60;
const MAX_WAIT_S = 30 * 60;
const boundedInterval = (seconds: number) =>
  Math.min(MAX_INTERVAL_S, Math.max(MIN_INTERVAL_S, Number.isFinite(seconds) ? seconds : 5));
const deadlineOf = (expiresIn: number) =>
  Date.now() + Math.min(MAX_WAIT_S, Number.isFinite(expiresIn) ? expiresIn : 0) * 1000;

function openBrowser(url: string): void {
  const command = process.platform === "darwin" ? "open" : process.platform === "win32" ? "explorer" : "xdg-open";
  try {
    // The browser (and all it starts) outlives us: it gets no token of ours in its environment.
    const { AGENTPLANE_TOKEN: _, ...env } = process.env;
    const child = spawn(command, [url], { stdio: "ignore", detached: true, env });
    child.on("error", () => {});
    child.unref();
  } catch {
    // No opener installed: the address is on the screen already.
  }
}

/**
 * The page the installation sends the person to, checked before it is shown or opened: a web
 * address (an opener would start whatever handles `file:`, `smb:` or a custom scheme, and
 * `explorer` runs a program), and whether it is on the installation's own origin. One that is not
 * may be a relay: a server that passes on another installation's code gets the token the person
 * approves there (device-code phishing). It is shown with a warning, never opened for them.
 */
export function verificationPage(apiUrl: string, address: string): { url: URL; sameOrigin: boolean } {
  const url = URL.parse(address);
  if (!url || (url.protocol !== "https:" && url.protocol !== "http:")) {
    throw new CliError(
      `the installation sent ${JSON.stringify(printableLine(address))} as its sign-in page, which is not an http(s) address: not opened`,
      EXIT.auth,
    );
  }
  return { url, sameOrigin: url.origin === new URL(apiUrl).origin };
}

function announce(io: Io, apiUrl: string, start: DeviceStart, what: string, browser: boolean): void {
  const page = verificationPage(apiUrl, start.verificationUri);
  const complete = verificationPage(apiUrl, start.verificationUriComplete);
  io.stderr.write(`! First copy your one-time code: ${printableLine(start.userCode)}\n`);
  io.stderr.write(`  Then open ${printableLine(page.url.href)} ${what}\n`);
  if (!page.sameOrigin || !complete.sameOrigin) {
    const away = !page.sameOrigin ? page.url : complete.url;
    io.stderr.write(
      `! ${printableLine(away.host)} is not ${new URL(apiUrl).host}, the installation logged in to: only go on if you know it is the same installation's address (its PUBLIC_URL); a browser is not opened for it\n`,
    );
    return;
  }
  // A browser only for a person at a terminal: never from a script or CI.
  if (browser && io.stdin.isTTY && io.stderr.isTTY) openBrowser(complete.url.href);
}

export async function deviceLogin(
  io: Io,
  url: string,
  options: { browser: boolean; clientName: string },
): Promise<DeviceLoginResult> {
  const sdk = clientFor(io, url, undefined);
  const installation = await sdk.request("getInstallation");
  if (installation.status !== "activated") return activate(io, url, options.browser);
  return signIn(io, url, options);
}

async function activate(io: Io, url: string, browser: boolean): Promise<DeviceLoginResult> {
  const sdk = clientFor(io, url, undefined);
  const start = await sdk.request("startActivation");
  io.stderr.write(`${url} is not activated yet: activating it makes you its owner.\n`);
  announce(io, url, start, "and enter it with the setup code the installation printed when it first started.", browser);
  let interval = boundedInterval(start.interval);
  const deadline = deadlineOf(start.expiresIn);
  while (Date.now() < deadline) {
    await sleep(interval * 1000);
    const poll = await sdk.request("pollActivation", { path: { sessionId: start.sessionId } });
    interval = boundedInterval(Math.max(interval, poll.interval));
    if (poll.status === "approved") {
      if (!poll.token) throw new CliError("the activation was approved, but its token was already handed out");
      return { token: poll.token, via: "activation" };
    }
    if (poll.status === "denied") throw new CliError("the activation was denied", EXIT.auth);
    if (poll.status === "expired") break;
  }
  throw new CliError("the code expired before it was entered: run `agentplane auth login` again", EXIT.auth);
}

async function signIn(
  io: Io,
  url: string,
  options: { browser: boolean; clientName: string },
): Promise<DeviceLoginResult> {
  const sdk = clientFor(io, url, undefined);
  let start: DeviceStart & { deviceCode: string };
  try {
    start = await sdk.request("startDeviceAuthorization", { body: { clientName: options.clientName } });
  } catch (error) {
    if (error instanceof ProblemError && (error.status === 404 || error.status === 405)) {
      throw new CliError(
        "this installation does not offer device sign-in: create a token and run `agentplane auth login --with-token`",
        EXIT.auth,
      );
    }
    throw error;
  }
  announce(io, url, start, "and approve this sign-in.", options.browser);
  let interval = boundedInterval(start.interval);
  const deadline = deadlineOf(start.expiresIn);
  // RFC 8628 §3.5: wait `interval` between polls; `slow_down` adds five seconds for good.
  while (Date.now() < deadline) {
    await sleep(interval * 1000);
    try {
      const answer = await sdk.request("pollDeviceAuthorization", { body: { deviceCode: start.deviceCode } });
      return { token: answer.token, tokenId: answer.tokenId, via: "device" };
    } catch (error) {
      if (!(error instanceof ProblemError)) throw error;
      const code = String(error.body.error ?? "");
      if (code === "authorization_pending") continue;
      if (code === "slow_down") {
        const asked = Number(error.body.interval);
        interval = boundedInterval(Math.max(interval + 5, Number.isFinite(asked) ? asked : 0));
        continue;
      }
      if (code === "access_denied") throw new CliError("the sign-in was denied", EXIT.auth);
      if (code === "expired_token") break;
      throw error;
    }
  }
  throw new CliError("the code expired before the sign-in was approved: run `agentplane auth login` again", EXIT.auth);
}
