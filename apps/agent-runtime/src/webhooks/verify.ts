import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import type { VerificationKind } from "@agentplane/contracts/runtime";

export interface VerificationSettings {
  kind: VerificationKind;
  secret: string | null;
  signatureHeader: string;
  timestampHeader: string;
  toleranceSeconds: number;
}

type HeaderReader = (name: string) => string | undefined;

function sameText(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  // Lengths differ: unequal, but still compare something so the time does not tell how close it was.
  if (left.length !== right.length) {
    timingSafeEqual(left, left);
    return false;
  }
  return timingSafeEqual(left, right);
}

/** The HMAC of `parts` in a row: over the body's bytes as sent (text parts as UTF-8). */
const hmacHex = (secret: string, ...parts: Array<string | Uint8Array>) => {
  const hmac = createHmac("sha256", secret);
  for (const part of parts) hmac.update(part);
  return hmac.digest("hex");
};

/** At most this many signatures are read from one PagerDuty header (two during a rotation). */
const MAX_PAGERDUTY_SIGNATURES = 10;

/**
 * PagerDuty v3: `X-PagerDuty-Signature` holds one or more comma-separated `v1=<hex HMAC-SHA256 of
 * the body>`, one per signing secret while a secret rotates; any one matching is enough. Every
 * candidate is compared, so the time does not tell which one matched.
 */
function pagerDutyFailure(
  secret: string,
  given: string | undefined,
  body: string | Uint8Array | undefined,
): string | undefined {
  if (!given?.trim()) return "Missing X-PagerDuty-Signature";
  const signatures = given
    .split(",")
    .slice(0, MAX_PAGERDUTY_SIGNATURES)
    .map((part) => /^v1=([0-9a-f]+)$/i.exec(part.trim())?.[1])
    .filter((hex): hex is string => hex !== undefined);
  if (signatures.length === 0) return "Malformed X-PagerDuty-Signature: no v1= signature";
  if (body === undefined) return undefined;
  const expected = hmacHex(secret, body);
  let matched = false;
  for (const signature of signatures) matched = sameText(signature.toLowerCase(), expected) || matched;
  return matched ? undefined : "Bad X-PagerDuty-Signature";
}

/**
 * Checks a delivery against its subscription's verification. Returns why it failed (for the 401's
 * detail: which header is missing or wrong, never the expected value), or undefined when it passes.
 * With `body` undefined only what the headers alone tell is checked (a missing or malformed
 * signature, a stale timestamp, a wrong fixed secret), so such a delivery is refused before its
 * body is read; the check with the body must follow.
 */
export function verificationFailure(
  settings: VerificationSettings,
  header: HeaderReader,
  body: string | Uint8Array | undefined,
  nowMs = Date.now(),
): string | undefined {
  if (settings.kind === "none") return undefined;
  const secret = settings.secret ?? "";
  // A kind without a stored secret cannot be met; the API refuses to store one, this is a backstop.
  if (!secret) return "The subscription's verification has no secret";
  switch (settings.kind) {
    case "github": {
      const given = header("x-hub-signature-256");
      if (!given) return "Missing X-Hub-Signature-256";
      if (body === undefined) return undefined;
      return sameText(given.trim(), `sha256=${hmacHex(secret, body)}`) ? undefined : "Bad X-Hub-Signature-256";
    }
    case "gitlab": {
      const given = header("x-gitlab-token");
      if (!given) return "Missing X-Gitlab-Token";
      return sameText(given, secret) ? undefined : "Bad X-Gitlab-Token";
    }
    case "pagerduty":
      return pagerDutyFailure(secret, header("x-pagerduty-signature"), body);
    case "bearer": {
      const given = header("authorization");
      const token = /^Bearer\s+(.+)$/i.exec(given ?? "")?.[1]?.trim();
      if (!token) return "Missing Authorization: Bearer";
      return sameText(token, secret) ? undefined : "Bad bearer secret";
    }
    case "hmac": {
      const given = header(settings.signatureHeader.toLowerCase());
      const stamp = header(settings.timestampHeader.toLowerCase());
      if (!given) return `Missing ${settings.signatureHeader}`;
      if (!stamp || !/^\d{1,12}$/.test(stamp.trim())) return `Missing or malformed ${settings.timestampHeader}`;
      const skew = Math.abs(nowMs / 1000 - Number(stamp.trim()));
      if (skew > settings.toleranceSeconds) return `${settings.timestampHeader} is outside the tolerance`;
      if (body === undefined) return undefined;
      const expected = hmacHex(secret, `${stamp.trim()}.`, body);
      const signature = given.trim().replace(/^sha256=/i, "");
      return sameText(signature.toLowerCase(), expected) ? undefined : `Bad ${settings.signatureHeader}`;
    }
  }
}

/**
 * What names a signed delivery itself, whatever delivery id header comes with it (the id is not
 * signed: anyone holding a captured delivery can change it). The generic HMAC signs the timestamp
 * with the body, so the same signature within the tolerance is the same delivery sent again.
 * GitHub's and PagerDuty's sign only the body, so the body is the delivery: their payloads carry
 * the event's own ids and times, so two deliveries of one subscription with the same bytes within
 * the 24 h remembered are one delivery sent twice. (GitLab and bearer send a fixed secret, which
 * proves the sender, not the delivery.) Only called once the delivery passed its check.
 */
export function signedDeliveryKey(
  settings: VerificationSettings,
  header: HeaderReader,
  body: string | Uint8Array,
): string | undefined {
  if (settings.kind === "github" || settings.kind === "pagerduty") {
    return `body:${createHash("sha256").update(body).digest("hex")}`;
  }
  if (settings.kind !== "hmac") return undefined;
  const given = header(settings.signatureHeader.toLowerCase())
    ?.trim()
    .replace(/^sha256=/i, "")
    .toLowerCase();
  return given ? `hmac:${given.slice(0, 200)}` : undefined;
}

/** The sender's delivery id, which makes a retry of the same delivery recognizable. */
export const DELIVERY_ID_HEADERS = ["x-github-delivery", "x-gitlab-event-uuid", "idempotency-key", "x-webhook-id"];

export function deliveryIdOf(header: HeaderReader): string | undefined {
  for (const name of DELIVERY_ID_HEADERS) {
    const value = header(name)?.trim();
    if (value) return value.slice(0, 200);
  }
  return undefined;
}
