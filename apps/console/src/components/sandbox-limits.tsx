import { useId } from "react";
import type { Sandbox } from "../api/types.ts";

type Resources = Sandbox["resources"];
type Unenforced = NonNullable<Sandbox["unenforcedLimits"]>;
type Limit = keyof Resources;

/** Each limit as people name it, in the order the API lists them. */
const LIMITS: { key: Limit; name: string; short: string; amount: (n: number) => string }[] = [
  { key: "cpuMillicores", name: "CPU", short: "CPU", amount: (n) => `${n} millicores` },
  { key: "memoryMiB", name: "Memory", short: "memory", amount: (n) => `${n} MiB` },
  { key: "diskMiB", name: "Disk", short: "disk", amount: (n) => `${n} MiB` },
  { key: "maxProcesses", name: "Processes", short: "processes", amount: (n) => `at most ${n}` },
];

const shortName = (key: Limit) => LIMITS.find((l) => l.key === key)?.short ?? key;

/** A limit and what was asked for: `Memory: 64 MiB`. */
export function describeLimit(key: Limit, resources: Resources): string {
  const limit = LIMITS.find((l) => l.key === key);
  const value = resources[key];
  if (!limit) return key;
  return value === undefined ? limit.name : `${limit.name}: ${limit.amount(value)}`;
}

/** Every limit the sandbox asks for, or that it asks for none. */
export function describeLimits(resources: Resources): string {
  const set = LIMITS.filter((l) => resources[l.key] !== undefined).map((l) => describeLimit(l.key, resources));
  return set.length ? set.join(", ") : "none set";
}

const WARNING =
  "mb-4 rounded-md border border-amber-400 bg-amber-50 px-3 py-2 text-sm text-amber-950 dark:border-amber-700 dark:bg-amber-950 dark:text-amber-100";

/**
 * The limits of a sandbox that do not hold where it runs (the local driver without writable
 * cgroups, or its disk), each with what was asked for, and why. Nothing when every limit holds.
 */
export function UnenforcedLimitsWarning({ sandbox }: { sandbox: Pick<Sandbox, "resources" | "unenforcedLimits"> }) {
  const titleId = useId();
  const unenforced = sandbox.unenforcedLimits;
  if (!unenforced?.resources.length) return null;
  return (
    <div role="status" aria-labelledby={titleId} data-testid="unenforced-limits" className={WARNING}>
      <p id={titleId} className="font-semibold">
        {unenforced.resources.length === 1 ? "A limit is" : "Some limits are"} not enforced on this host
      </p>
      <ul className="my-1 list-disc pl-5">
        {unenforced.resources.map((key) => (
          <li key={key}>{describeLimit(key, sandbox.resources)}</li>
        ))}
      </ul>
      <p>Why: {unenforced.reason}</p>
    </div>
  );
}

/**
 * The list's marker for a sandbox with limits that do not hold: names them, and opens (with the
 * keyboard too: a native disclosure) to say why.
 */
export function UnenforcedLimitsMarker({ unenforced }: { unenforced: Unenforced | undefined }) {
  if (!unenforced?.resources.length) return null;
  return (
    <details className="mt-1 text-xs text-amber-800 dark:text-amber-300">
      <summary className="cursor-pointer focus-visible:outline-2 focus-visible:outline-indigo-500">
        {unenforced.resources.length === 1 ? "Limit" : "Limits"} not enforced:{" "}
        {unenforced.resources.map((key) => shortName(key)).join(", ")}
      </summary>
      <p className="mt-1">{unenforced.reason}</p>
    </details>
  );
}
