import { createHash } from "node:crypto";
import { CEDAR_SCHEMA } from "@agentplane/contracts";
import type { FieldError } from "@agentplane/problem-details";
import { ProblemError } from "@agentplane/problem-details";
import * as cedar from "@cedar-policy/cedar-wasm/nodejs";
import type { StoredRule } from "../db/schema.ts";
import { checkPolicyComplexity } from "./complexity.ts";
import { statementAt, statementLabel } from "./statement-at.ts";

type CedarError = cedar.DetailedError;

/** 1-based line and column of a byte offset in `text` (Cedar reports offsets). */
export function lineColumn(text: string, offset: number): { line: number; column: number } {
  const before = Buffer.from(text, "utf8").subarray(0, offset).toString("utf8");
  const lines = before.split("\n");
  return { line: lines.length, column: (lines.at(-1)?.length ?? 0) + 1 };
}

function toFieldErrors(text: string, errors: readonly CedarError[], pointer: string): FieldError[] {
  return errors.map((error) => {
    const at = error.sourceLocations?.[0];
    const where = at ? lineColumn(text, at.start) : undefined;
    const help = error.help ? ` (${error.help})` : "";
    const located: FieldError & { line?: number; column?: number } = {
      pointer,
      message: where
        ? `line ${where.line}, column ${where.column}: ${error.message}${help}`
        : `${error.message}${help}`,
      ...(where ? { line: where.line, column: where.column } : {}),
    };
    return located;
  });
}

function invalid(detail: string, errors: FieldError[]): ProblemError {
  return new ProblemError("validation-failed", { detail, errors });
}

function actionsOf(json: cedar.PolicyJson): string[] | null {
  const constraint = json.action;
  if (constraint.op === "All") return null;
  const uids: cedar.EntityUidJson[] = [];
  if (constraint.op === "==") {
    if ("entity" in constraint) uids.push(constraint.entity);
  } else if ("entity" in constraint) uids.push(constraint.entity);
  else uids.push(...constraint.entities);
  return uids.map((uid) => ("__entity" in uid ? uid.__entity.id : uid.id));
}

/** How each statement is named in errors, in text order: `@id("…")`, else its position. */
function statementNames(text: string): string[] {
  const parts = cedar.policySetTextToParts(text);
  if (parts.type === "failure") return [];
  const ordered = [...parts.policies].sort((a, b) => text.indexOf(a) - text.indexOf(b));
  return ordered.map((statement, i) => {
    const json = cedar.policyToJson(statement);
    const id = json.type === "success" ? json.json.annotations?.id : undefined;
    return statementLabel(id || undefined, i);
  });
}

/**
 * Parses and validates a policy body against the published schema and splits it into its
 * statements, each with its rule id (`@id("…")`, or a stable id derived from the statement's text)
 * and the actions its scope can match. Throws a 400 problem whose errors carry line and column.
 */
export function compilePolicyText(text: string, pointer = "/body/cedar"): StoredRule[] {
  checkPolicyComplexity(text, pointer, (offset) => lineColumn(text, offset));
  const parsed = cedar.checkParsePolicySet({ staticPolicies: text });
  if (parsed.type === "failure") {
    // Name the statement each error is in, as schema errors do: people know statements by @id.
    const inStatement = parsed.errors.map((error) => {
      const at = error.sourceLocations?.[0];
      return at ? { ...error, message: `in statement ${statementAt(text, at.start)}: ${error.message}` } : error;
    });
    throw invalid("The Cedar policy does not parse", toFieldErrors(text, inStatement, pointer));
  }
  const validated = cedar.validate({ schema: CEDAR_SCHEMA, policies: { staticPolicies: text } });
  if (validated.type === "failure") {
    throw invalid("The Cedar policy is not valid", toFieldErrors(text, validated.errors, pointer));
  }
  if (validated.validationErrors.length > 0) {
    // Cedar names statements `policy0`, `policy1`… in text order; people know them by their @id.
    const names = statementNames(text);
    const named = (message: string) =>
      message.replace(/\bpolicy `?policy(\d+)`?/g, (whole, n: string) => {
        const name = names[Number(n)];
        return name ? `statement ${name}` : whole;
      });
    throw invalid(
      "The Cedar policy does not match the Agentplane schema (unknown action, entity type or attribute)",
      toFieldErrors(
        text,
        validated.validationErrors.map((e) => ({ ...e.error, message: named(e.error.message) })),
        pointer,
      ),
    );
  }
  const parts = cedar.policySetTextToParts(text);
  if (parts.type === "failure")
    throw invalid("The Cedar policy does not parse", toFieldErrors(text, parts.errors, pointer));
  if (parts.policy_templates.length > 0) {
    throw invalid("Policy templates are not supported", [{ pointer, message: "remove ?principal / ?resource slots" }]);
  }
  if (parts.policies.length === 0) throw invalid("The policy has no statement", [{ pointer, message: "no statement" }]);
  const ordered = [...parts.policies].sort((a, b) => text.indexOf(a) - text.indexOf(b));
  const rules: StoredRule[] = [];
  const seen = new Set<string>();
  for (const statement of ordered) {
    const json = cedar.policyToJson(statement);
    if (json.type === "failure")
      throw invalid("The Cedar policy does not parse", toFieldErrors(statement, json.errors, pointer));
    let id = json.json.annotations?.id;
    if (id === undefined || id === "") {
      const digest = createHash("sha256").update(statement.replace(/\s+/g, " ").trim()).digest("hex");
      id = `rule-${digest.slice(0, 10)}`;
      for (let n = 2; seen.has(id); n++) id = `rule-${digest.slice(0, 10)}-${n}`;
    } else if (seen.has(id)) {
      throw invalid("Two statements carry the same @id", [{ pointer, message: `duplicate @id("${id}")` }]);
    } else if (!/^[A-Za-z0-9][A-Za-z0-9._:-]{0,99}$/.test(id)) {
      throw invalid("A rule id is not valid", [
        { pointer, message: `@id("${id}"): letters, digits, '.', '_', ':' and '-' only, at most 100` },
      ]);
    }
    seen.add(id);
    rules.push({ id, effect: json.json.effect, text: statement, actions: actionsOf(json.json) });
  }
  return rules;
}
