import { ProblemError } from "@agentplane/problem-details";
import { escapesPlainLetters } from "./unseen-input.ts";

type Json = Record<string, unknown>;

/**
 * Options that make the provider bill a call above the price table the estimate and the usage are
 * priced from (standard rates): Bedrock's priority tier and latency-optimized inference, OpenAI's
 * priority tier, Anthropic's long-context beta (`context-1m-…`, billed at a premium past 200k input
 * tokens). The call would run, and be charged to the project, at a fraction of what it cost. The
 * standard and cheaper options (default, flex, auto, standard_only) and other betas pass.
 */
const HEADERS: Record<string, ReadonlySet<string>> = {
  "x-amzn-bedrock-service-tier": new Set(["default", "flex"]),
  "x-amzn-bedrock-performanceconfig-latency": new Set(["standard"]),
};

const priced = (what: string, value: unknown, pointer: string) =>
  new ProblemError("validation-failed", {
    detail: `${what} ${JSON.stringify(value).slice(0, 40)} is billed above the price table this installation charges by; use the standard tier`,
    errors: [{ pointer, message: "only standard-priced tiers are served" }],
  });

/**
 * A Bedrock guardrail runs on the call's input and output at the provider and is billed per text
 * unit on top of the tokens, which the price table does not hold (its own ApplyGuardrail API is
 * not forwarded either): an invoke names it in this header, a Converse call in `guardrailConfig`.
 * It is also one of the shared account's guardrails, whoever defined it.
 */
const GUARDRAIL_HEADER = "x-amzn-bedrock-guardrailidentifier";

const guarded = (what: string, value: unknown, pointer: string) =>
  new ProblemError("validation-failed", {
    detail: `${what} ${JSON.stringify(value).slice(0, 40)} names a Bedrock guardrail, billed beside the tokens this installation charges by; call the model without it`,
    errors: [{ pointer, message: "guardrails are not served" }],
  });

/** Anthropic betas billed above the standard rates of the price table. */
const PREMIUM_BETA = /^context-1m(?:-|$)/i;

/** Refuses a header asking for a tier, latency or beta billed above the table. */
export function checkTierHeaders(headers: Headers): void {
  for (const [name, allowed] of Object.entries(HEADERS)) {
    const value = headers.get(name);
    if (value !== null && !allowed.has(value.trim().toLowerCase())) throw priced(name, value, `/headers/${name}`);
  }
  const guardrail = headers.get(GUARDRAIL_HEADER);
  if (guardrail !== null) throw guarded(GUARDRAIL_HEADER, guardrail, `/headers/${GUARDRAIL_HEADER}`);
  const betas = headers.get("anthropic-beta");
  if (betas === null) return;
  for (const beta of betas.split(",")) {
    if (PREMIUM_BETA.test(beta.trim())) throw priced("anthropic-beta", beta.trim(), "/headers/anthropic-beta");
  }
}

/** Refuses body members asking for a tier or latency billed above the table. */
export function checkTierMembers(json: Json): void {
  const member = (parent: unknown, name: string) =>
    parent && typeof parent === "object" && !Array.isArray(parent) ? (parent as Json)[name] : undefined;
  // OpenAI-style and Anthropic: service_tier; Converse: serviceTier.type, performanceConfig.latency.
  const tier = json.service_tier;
  if (tier !== undefined && !["auto", "default", "flex", "standard_only"].includes(tier as string)) {
    throw priced("service_tier", tier, "/body/service_tier");
  }
  const converseTier =
    json.serviceTier === undefined ? undefined : (member(json.serviceTier, "type") ?? json.serviceTier);
  if (converseTier !== undefined && !["default", "flex"].includes(converseTier as string)) {
    throw priced("serviceTier", converseTier, "/body/serviceTier/type");
  }
  // Bedrock's Anthropic models take their betas in the body.
  const betas = json.anthropic_beta;
  for (const beta of Array.isArray(betas) ? betas : betas === undefined ? [] : [betas]) {
    if (typeof beta === "string" && PREMIUM_BETA.test(beta.trim())) {
      throw priced("anthropic_beta", beta, "/body/anthropic_beta");
    }
  }
  if (json.guardrailConfig !== undefined && json.guardrailConfig !== null) {
    throw guarded("guardrailConfig", json.guardrailConfig, "/body/guardrailConfig");
  }
  const latency = json.performanceConfig === undefined ? undefined : member(json.performanceConfig, "latency");
  if (latency !== undefined && latency !== "standard") {
    throw priced("performanceConfig.latency", latency, "/body/performanceConfig/latency");
  }
}

const CACHE_CONTROL = Buffer.from('"cache_control"');
/** A `cache_control` object (flat: `type`, `ttl`) after its name, and the `ttl` member in it. */
const CACHE_OBJECT = /^\s*:\s*\{([^{}]{0,400})\}/;
const TTL = /"ttl"\s*:\s*("(?:[^"\\]|\\.)*"|[^,}\s]+)/;

/**
 * Refuses an Anthropic cache breakpoint with a lifetime other than the standard five minutes
 * (`"cache_control": {"type": "ephemeral", "ttl": "1h"}`, anywhere in the body): its cache writes
 * are billed at twice the input rate, above the table's five-minute rate the usage is priced at.
 */
export function checkCacheTtl(raw: Uint8Array): void {
  let b = Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength);
  // A name spelled with escapes of plain letters (`"cache\u005fcontrol"`) is decoded first.
  const escaped = escapesPlainLetters(b);
  if (!escaped && b.indexOf(CACHE_CONTROL) < 0) return;
  if (escaped) {
    try {
      b = Buffer.from(JSON.stringify(JSON.parse(b.toString("utf8"))));
    } catch {
      // analyzeRequest refuses a body that is not JSON before it gets here.
    }
  }
  for (let at = b.indexOf(CACHE_CONTROL); at >= 0; at = b.indexOf(CACHE_CONTROL, at + 1)) {
    const start = at + CACHE_CONTROL.length;
    const object = CACHE_OBJECT.exec(b.toString("utf8", start, start + 512))?.[1];
    const ttl = object === undefined ? undefined : TTL.exec(object)?.[1];
    if (ttl !== undefined && ttl !== '"5m"') {
      throw priced("cache_control.ttl", ttl.replace(/^"|"$/g, ""), "/body/cache_control/ttl");
    }
  }
}
