import { type FormEvent, useState } from "react";
import type { AgentProfile } from "../../../client/api.ts";
import { api } from "../base.ts";
import { ErrorBox, fieldErrors, Section, Switch, useLoad } from "../ui.tsx";

const OVERRIDES = [
  { key: "main", label: "Main model", fallback: "the environment's default main model" },
  { key: "heartbeat", label: "Heartbeat model", fallback: "the main model" },
  { key: "cron", label: "Cron model", fallback: "the main model" },
] as const;
type OverrideKey = (typeof OVERRIDES)[number]["key"];

export function ProfilePage(props: { profile: AgentProfile; onProfile: (p: AgentProfile) => void }) {
  const { profile } = props;
  const heartbeat = useLoad(api.heartbeat);
  const [verboseError, setVerboseError] = useState<unknown>();
  const [busy, setBusy] = useState(false);

  const setVerbose = async (verbose: boolean) => {
    setBusy(true);
    try {
      props.onProfile(await api.setVerbose(verbose));
      setVerboseError(undefined);
    } catch (err) {
      setVerboseError(err);
    } finally {
      setBusy(false);
    }
  };

  return (
    <div className="stack">
      <Section title="Agent">
        <dl className="facts">
          <dt>Name</dt>
          <dd>{profile.name}</dd>
          <dt>Team</dt>
          <dd>{profile.team}</dd>
          <dt>Provider</dt>
          <dd>
            {profile.provider}
            {profile.gateway ? " (through the platform's model gateway)" : ""}
          </dd>
          <dt>Classification model</dt>
          <dd>
            <code>{profile.models.classification}</code>{" "}
            <span className="muted">(the heartbeat gate; never overridden)</span>
          </dd>
          <dt>Context window</dt>
          <dd>{profile.contextWindow ? `${profile.contextWindow.toLocaleString()} tokens` : "unknown"}</dd>
        </dl>
        <div className="row">
          <span id="verbose-label">Verbose</span>
          <Switch label="Verbose" checked={profile.verbose} onChange={setVerbose} busy={busy} />
          <span className="muted">
            {profile.verbose
              ? "Every text step and tool call is shown as it happens."
              : "Only the last text step of a turn is shown; earlier steps are stored but hidden."}
          </span>
        </div>
        <ErrorBox error={verboseError} />
      </Section>
      <ModelOverrides profile={profile} onProfile={props.onProfile} />
      <Section title="Heartbeat">
        <ErrorBox error={heartbeat.error} />
        {heartbeat.data && (
          <>
            <p>
              {heartbeat.data.intervalMinutes > 0
                ? `Every ${heartbeat.data.intervalMinutes} minutes with ${profile.models.heartbeat}.`
                : "Off (HEARTBEAT_INTERVAL_MINUTES=0)."}
            </p>
            <p className="muted">
              Checklist: <code>HEARTBEAT.md</code> in the agent's data directory
            </p>
            <pre className="checklist">{heartbeat.data.checklist || "(empty: heartbeat runs cost no model call)"}</pre>
          </>
        )}
      </Section>
    </div>
  );
}

function ModelOverrides(props: { profile: AgentProfile; onProfile: (p: AgentProfile) => void }) {
  const { profile } = props;
  const [values, setValues] = useState<Record<OverrideKey, string>>({
    main: profile.overrides.main ?? "",
    heartbeat: profile.overrides.heartbeat ?? "",
    cron: profile.overrides.cron ?? "",
  });
  const [error, setError] = useState<unknown>();
  const [saved, setSaved] = useState(false);
  const fields = fieldErrors(error);

  const save = async (event: FormEvent) => {
    event.preventDefault();
    setSaved(false);
    try {
      // "" clears an override (the API's rule), so an emptied field falls back again.
      const next = await api.setModels({
        main: values.main.trim(),
        heartbeat: values.heartbeat.trim(),
        cron: values.cron.trim(),
      });
      props.onProfile(next);
      setError(undefined);
      setSaved(true);
    } catch (err) {
      setError(err);
    }
  };

  return (
    <Section title="Model overrides">
      <form onSubmit={save} className="form">
        {OVERRIDES.map((o) => (
          <div key={o.key} className="field">
            <label htmlFor={`model-${o.key}`}>{o.label}</label>
            <input
              id={`model-${o.key}`}
              value={values[o.key]}
              placeholder={`empty: uses ${o.fallback}`}
              aria-describedby={`model-${o.key}-hint`}
              aria-invalid={fields[o.key] ? true : undefined}
              onChange={(e) => setValues({ ...values, [o.key]: e.target.value })}
            />
            <span id={`model-${o.key}-hint`} className="muted">
              In use: <code>{profile.models[o.key]}</code>
              {profile.overrides[o.key] ? "" : ` (empty: uses ${o.fallback})`}
            </span>
            {fields[o.key] && (
              <span className="error" role="alert">
                {fields[o.key]}
              </span>
            )}
          </div>
        ))}
        <div className="row">
          <button type="submit">Save models</button>
          {saved && <span role="status">Saved.</span>}
        </div>
        <ErrorBox error={Object.keys(fields).length > 0 ? undefined : error} />
      </form>
    </Section>
  );
}
