import { type FormEvent, useState } from "react";
import type { Schedule } from "../../../client/api.ts";
import { api } from "../base.ts";
import { ConfirmDelete, ErrorBox, fieldErrors, Section, Switch, useAction, useLoad } from "../ui.tsx";

type Kind = "cron" | "everySeconds" | "at";

function timing(s: Schedule): string {
  if (s.cron) return `cron ${s.cron}${s.timezone ? ` (${s.timezone})` : ""}`;
  if (s.everySeconds) return `every ${s.everySeconds} s`;
  return `once at ${s.at}`;
}

export function SchedulesPage() {
  const list = useLoad(api.schedules);
  const { act, error } = useAction(list.reload);
  return (
    <div className="stack">
      <CreateSchedule onCreated={() => void list.reload()} />
      <Section title="Schedules">
        <ErrorBox error={error ?? list.error} />
        {list.data?.length === 0 && <p className="muted">No schedules yet.</p>}
        {list.data?.map((s) => (
          <article key={s.id} className="subscription" aria-label={`Schedule ${s.name}`}>
            <div className="card-head">
              <h3>{s.name}</h3>
              <span className="row">
                Active{" "}
                <Switch
                  label={`Active ${s.name}`}
                  checked={s.active}
                  onChange={(active) => act(() => api.updateSchedule(s.id, { active }))}
                />
              </span>
            </div>
            <dl className="facts">
              <dt>When</dt>
              <dd>{timing(s)}</dd>
              <dt>Next run</dt>
              <dd>{s.nextRunAt ? new Date(s.nextRunAt).toLocaleString() : "none"}</dd>
              <dt>Deliver to</dt>
              <dd>{s.deliverTo}</dd>
              {s.pausedReason && (
                <>
                  <dt>Paused</dt>
                  <dd className="warning">{s.pausedReason}</dd>
                </>
              )}
            </dl>
            <p className="prompt">{s.prompt}</p>
            <History id={s.id} />
            <div className="row">
              <button type="button" onClick={() => act(() => api.runSchedule(s.id))}>
                Run {s.name} now
              </button>
              <ConfirmDelete what={s.name} onConfirm={() => act(() => api.deleteSchedule(s.id))} />
            </div>
          </article>
        ))}
      </Section>
    </div>
  );
}

function History({ id }: { id: string }) {
  const runs = useLoad(() => api.scheduleRuns(id), [id]);
  return (
    <details onToggle={(e) => (e.currentTarget.open ? void runs.reload() : undefined)}>
      <summary>History ({runs.data?.length ?? 0})</summary>
      <ErrorBox error={runs.error} />
      <ul className="runs">
        {runs.data?.map((r) => (
          <li key={r.id}>
            <span className={`status ${r.status}`}>{r.status}</span> {r.trigger}{" "}
            <time dateTime={r.scheduledFor}>{new Date(r.scheduledFor).toLocaleString()}</time>
            {r.error && <span className="error"> {r.error}</span>}
          </li>
        ))}
      </ul>
    </details>
  );
}

function CreateSchedule(props: { onCreated: () => void }) {
  const [name, setName] = useState("");
  const [kind, setKind] = useState<Kind>("cron");
  const [value, setValue] = useState("0 9 * * 1-5");
  const [timezone, setTimezone] = useState("");
  const [prompt, setPrompt] = useState("");
  const [error, setError] = useState<unknown>();
  const fields = fieldErrors(error);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    try {
      const when =
        kind === "cron"
          ? { cron: value, ...(timezone.trim() ? { timezone: timezone.trim() } : {}) }
          : kind === "everySeconds"
            ? { everySeconds: Number(value) }
            : { at: value };
      await api.createSchedule({ name, prompt, ...when });
      setName("");
      setPrompt("");
      setError(undefined);
      props.onCreated();
    } catch (err) {
      setError(err);
    }
  };

  return (
    <Section title="New schedule">
      <form className="form" onSubmit={submit}>
        <div className="field">
          <label htmlFor="sch-name">Name</label>
          <input
            id="sch-name"
            required
            value={name}
            onChange={(e) => setName(e.target.value)}
            {...invalid("sch-name", fields.name)}
          />
          {fields.name && (
            <span id="sch-name-error" className="error">
              {fields.name}
            </span>
          )}
        </div>
        <div className="field">
          <label htmlFor="sch-kind">Timing</label>
          <select
            id="sch-kind"
            value={kind}
            onChange={(e) => {
              const k = e.target.value as Kind;
              setKind(k);
              setValue(
                k === "cron"
                  ? "0 9 * * 1-5"
                  : k === "everySeconds"
                    ? "3600"
                    : new Date(Date.now() + 3600_000).toISOString(),
              );
            }}
          >
            <option value="cron">Cron expression</option>
            <option value="everySeconds">Every N seconds</option>
            <option value="at">Once at (ISO 8601)</option>
          </select>
        </div>
        <div className="field">
          <label htmlFor="sch-value">
            {kind === "cron" ? "Cron" : kind === "everySeconds" ? "Seconds (at least 10)" : "At"}
          </label>
          <input
            id="sch-value"
            required
            value={value}
            onChange={(e) => setValue(e.target.value)}
            {...invalid("sch-value", fields[kind])}
          />
          {fields[kind] && (
            <span id="sch-value-error" className="error">
              {fields[kind]}
            </span>
          )}
        </div>
        {kind === "cron" && (
          <div className="field">
            <label htmlFor="sch-tz">Time zone (IANA, optional)</label>
            <input
              id="sch-tz"
              value={timezone}
              placeholder="Europe/Berlin"
              onChange={(e) => setTimezone(e.target.value)}
              {...invalid("sch-tz", fields.timezone)}
            />
            {fields.timezone && (
              <span id="sch-tz-error" className="error">
                {fields.timezone}
              </span>
            )}
          </div>
        )}
        <div className="field">
          <label htmlFor="sch-prompt">Prompt</label>
          <textarea
            id="sch-prompt"
            required
            rows={3}
            value={prompt}
            onChange={(e) => setPrompt(e.target.value)}
            {...invalid("sch-prompt", fields.prompt)}
          />
          {fields.prompt && (
            <span id="sch-prompt-error" className="error">
              {fields.prompt}
            </span>
          )}
        </div>
        <ErrorBox error={error} />
        <button type="submit">Create schedule</button>
      </form>
    </Section>
  );
}

/** A field the API refused: marked invalid, its message read out as its description. */
function invalid(id: string, message: string | undefined) {
  return message ? { "aria-invalid": true, "aria-describedby": `${id}-error` } : {};
}
