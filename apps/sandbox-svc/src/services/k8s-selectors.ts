import type { K8sPod } from "@agentplane/contracts";
import { badRequest } from "@agentplane/problem-details";

/** One requirement of a selector: a test of one pod. */
type Requirement = (pod: K8sPod) => boolean;

const KEY = String.raw`(?:[A-Za-z0-9](?:[-A-Za-z0-9_.]*[A-Za-z0-9])?/)?[A-Za-z0-9](?:[-A-Za-z0-9_.]*[A-Za-z0-9])?`;
const VALUE = String.raw`(?:[A-Za-z0-9](?:[-A-Za-z0-9_.]*[A-Za-z0-9])?)?`;
const SET = new RegExp(String.raw`^(${KEY})\s+(in|notin)\s*\(([^()]*)\)$`);
const EXISTS = new RegExp(String.raw`^(!?)\s*(${KEY})$`);
const EQUALS = new RegExp(String.raw`^(${KEY})\s*(==|=|!=)\s*(${VALUE})$`);
const FIELD = /^([a-zA-Z.]+)\s*(==|=|!=)\s*([^,=!]*)$/;

/** The pod fields a field selector may name, as the Kubernetes API server supports them for pods. */
const FIELDS: Record<string, (pod: K8sPod) => string> = {
  "metadata.name": (pod) => pod.metadata.name,
  "metadata.namespace": (pod) => pod.metadata.namespace,
  "status.phase": (pod) => pod.status.phase,
};

/** Splits on the commas between requirements (not those inside an `in (…)` list). */
function requirements(selector: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < selector.length; i++) {
    const c = selector[i];
    if (c === "(") depth++;
    else if (c === ")") depth--;
    else if (c === "," && depth === 0) {
      parts.push(selector.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(selector.slice(start));
  return parts.map((p) => p.trim());
}

function refused(param: "labelSelector" | "fieldSelector", selector: string, why: string) {
  return badRequest(`${param} ${JSON.stringify(selector)}: ${why}`, [{ pointer: `/query/${param}`, message: why }]);
}

/** A Kubernetes label selector (`a=b,c!=d,e in (f,g),!h`) as a test of pods; a malformed one is a 400. */
export function labelSelector(selector: string): Requirement {
  if (selector.trim() === "") return () => true;
  const tests = requirements(selector).map((part): Requirement => {
    const label = (pod: K8sPod, key: string) => pod.metadata.labels[key];
    let m = SET.exec(part);
    if (m) {
      const [, key, op, list] = m as unknown as [string, string, string, string];
      const values = list.split(",").map((v) => v.trim());
      if (values.some((v) => !new RegExp(`^${VALUE}$`).test(v))) {
        throw refused("labelSelector", selector, `"${part}" lists a value that is no label value`);
      }
      return op === "in"
        ? (pod) => values.includes(label(pod, key) ?? "\0")
        : (pod) => !values.includes(label(pod, key) ?? "\0");
    }
    m = EXISTS.exec(part);
    if (m) {
      const [, not, key] = m as unknown as [string, string, string];
      return not ? (pod) => label(pod, key) === undefined : (pod) => label(pod, key) !== undefined;
    }
    m = EQUALS.exec(part);
    if (m) {
      const [, key, op, value] = m as unknown as [string, string, string, string];
      return op === "!=" ? (pod) => label(pod, key) !== value : (pod) => label(pod, key) === value;
    }
    throw refused(
      "labelSelector",
      selector,
      `"${part}" is not a requirement (key, !key, key=value, key!=value, key in (…), key notin (…))`,
    );
  });
  return (pod) => tests.every((test) => test(pod));
}

/** A Kubernetes field selector over metadata.name, metadata.namespace and status.phase; others are a 400. */
export function fieldSelector(selector: string): Requirement {
  if (selector.trim() === "") return () => true;
  const tests = requirements(selector).map((part): Requirement => {
    const m = FIELD.exec(part);
    if (!m) throw refused("fieldSelector", selector, `"${part}" is not field=value or field!=value`);
    const [, field, op, value] = m as unknown as [string, string, string, string];
    const read = FIELDS[field];
    if (!read) {
      throw refused(
        "fieldSelector",
        selector,
        `field label not supported: ${field} (${Object.keys(FIELDS).join(", ")})`,
      );
    }
    return op === "!=" ? (pod) => read(pod) !== value.trim() : (pod) => read(pod) === value.trim();
  });
  return (pod) => tests.every((test) => test(pod));
}
