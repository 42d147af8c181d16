import { useState } from "react";
import type { RuntimeUsageFigures, UsageGroupBy } from "../../../client/api.ts";
import { api } from "../base.ts";
import { ErrorBox, Section, useLoad } from "../ui.tsx";

const PERIODS = [
  { days: 1, label: "Last 24 hours" },
  { days: 7, label: "Last 7 days" },
  { days: 30, label: "Last 30 days" },
  { days: 90, label: "Last 90 days" },
] as const;
interface Grouping {
  id: UsageGroupBy;
  label: string;
  column: string;
}
const BY_DAY: Grouping = { id: "day", label: "Day", column: "Day (UTC)" };
const GROUPS: readonly Grouping[] = [
  BY_DAY,
  { id: "source", label: "Source", column: "Source" },
  { id: "model", label: "Model", column: "Model" },
];
const SOURCES: Record<string, string> = {
  web: "Chat",
  team_chat: "Team chat",
  webhook: "Webhooks",
  schedule: "Schedules",
  heartbeat: "Heartbeat",
  voice: "Voice meetings",
  other: "Other",
};

const number = new Intl.NumberFormat();
const tokens = (n: number) => number.format(n);
const minutes = (m: number) => `${m.toFixed(m > 0 && m < 1 ? 2 : 1)} min`;
/** A floor when part of the usage has no known price. */
const cost = (f: RuntimeUsageFigures) =>
  `${f.unpriced > 0 ? "≥ " : ""}$${f.costUsd.toFixed(f.costUsd > 0 && f.costUsd < 1 ? 4 : 2)}`;

/** Model tokens and cost and meeting audio minutes of this runtime (`GET /agents/usage`). */
export function UsagePage() {
  const [days, setDays] = useState<number>(30);
  const [groupBy, setGroupBy] = useState<UsageGroupBy>("day");
  const usage = useLoad(() => {
    const to = new Date();
    return api.usage({ from: new Date(to.getTime() - days * 86_400_000).toISOString(), to: to.toISOString(), groupBy });
  }, [days, groupBy]);
  const group = GROUPS.find((g) => g.id === groupBy) ?? BY_DAY;
  const total = usage.data?.total;
  return (
    <div className="stack">
      <Section title="Usage">
        <div className="row usage-filters">
          <div className="field">
            <label htmlFor="usage-period">Period</label>
            <select id="usage-period" value={days} onChange={(e) => setDays(Number(e.target.value))}>
              {PERIODS.map((p) => (
                <option key={p.days} value={p.days}>
                  {p.label}
                </option>
              ))}
            </select>
          </div>
          <div className="field">
            <label htmlFor="usage-group">Group by</label>
            <select id="usage-group" value={groupBy} onChange={(e) => setGroupBy(e.target.value as UsageGroupBy)}>
              {GROUPS.map((g) => (
                <option key={g.id} value={g.id}>
                  {g.label}
                </option>
              ))}
            </select>
          </div>
        </div>
        <ErrorBox error={usage.error} />
        {total && (
          <dl className="facts" aria-label="Totals">
            <dt>Cost</dt>
            <dd>{cost(total)}</dd>
            <dt>Tokens</dt>
            <dd>
              {tokens(total.inputTokens)} in · {tokens(total.outputTokens)} out
              {total.cacheReadTokens + total.cacheWriteTokens > 0 &&
                ` · ${tokens(total.cacheReadTokens)} cache read · ${tokens(total.cacheWriteTokens)} cache write`}
            </dd>
            <dt>Model calls</dt>
            <dd>{number.format(total.modelCalls)}</dd>
            <dt>Meeting audio</dt>
            <dd>
              {minutes(total.audioInputMinutes)} heard · {minutes(total.audioOutputMinutes)} spoken ·{" "}
              {minutes(total.transcriptionMinutes)} transcribed ({number.format(total.voiceSessions)} calls)
            </dd>
          </dl>
        )}
        {total && total.unpriced > 0 && (
          <p className="muted">
            The cost is a floor (≥): {number.format(total.unpriced)} model calls or meetings have no known price
            (meeting audio is billed by the minute and is not in the price table), so their cost is not included.
          </p>
        )}
      </Section>
      <Section title={`By ${group.label.toLowerCase()}`}>
        {usage.data?.groups.length === 0 && <p className="muted">Nothing used in this period.</p>}
        {usage.data && usage.data.groups.length > 0 && (
          // Scrolls sideways on a narrow screen; focusable so a keyboard can scroll it too.
          // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable region must be reachable by keyboard
          <section className="table-scroll" aria-label={`Usage by ${group.label.toLowerCase()}`} tabIndex={0}>
            <table>
              <thead>
                <tr>
                  <th scope="col">{group.column}</th>
                  <th scope="col">Cost</th>
                  <th scope="col">Tokens in</th>
                  <th scope="col">Tokens out</th>
                  <th scope="col">Model calls</th>
                  <th scope="col">Audio heard</th>
                  <th scope="col">Audio spoken</th>
                  <th scope="col">Transcribed</th>
                </tr>
              </thead>
              <tbody>
                {usage.data.groups.map((g) => (
                  <tr key={g.key}>
                    <th scope="row">{groupBy === "source" ? (SOURCES[g.key] ?? g.key) : g.key}</th>
                    <td>{cost(g)}</td>
                    <td>{tokens(g.inputTokens)}</td>
                    <td>{tokens(g.outputTokens)}</td>
                    <td>{number.format(g.modelCalls)}</td>
                    <td>{minutes(g.audioInputMinutes)}</td>
                    <td>{minutes(g.audioOutputMinutes)}</td>
                    <td>{minutes(g.transcriptionMinutes)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </section>
        )}
      </Section>
    </div>
  );
}
