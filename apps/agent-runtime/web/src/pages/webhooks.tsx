import {
  normalizeWebhookName,
  WEBHOOK_NAME_PATTERN,
  WEBHOOK_NAME_RULE,
} from "@agentplane/contracts/runtime/webhook-name";
import { type FormEvent, useEffect, useMemo, useRef, useState } from "react";
import type { WebhookRun, WebhookSubscription } from "../../../client/api.ts";
import { renderPrompt } from "../../../src/webhooks/template.ts";
import { api, webhookUrl } from "../base.ts";
import { ConfirmDelete, ErrorBox, fieldErrors, Section, Switch, useAction, useLoad } from "../ui.tsx";

const TARGETS = ["All channels", "Chat", "Team chat"] as const;
const VERIFICATIONS = [
  { kind: "none", label: "None (anyone who knows the URL can deliver)" },
  { kind: "github", label: "GitHub: X-Hub-Signature-256 (HMAC of the body)" },
  { kind: "gitlab", label: "GitLab: X-Gitlab-Token" },
  { kind: "pagerduty", label: "PagerDuty v3: X-PagerDuty-Signature (HMAC of the body)" },
  { kind: "hmac", label: "HMAC-SHA256 of <timestamp>.<body> with a timestamp header" },
  { kind: "bearer", label: "Shared bearer secret (Authorization: Bearer)" },
] as const;
type VerificationKind = (typeof VERIFICATIONS)[number]["kind"];
const SAMPLE = '{\n  "event_type": "deploy",\n  "service": "api",\n  "status": "failed"\n}';

export function WebhooksPage() {
  const state = useLoad(api.receiver);
  const [editing, setEditing] = useState<WebhookSubscription | "new" | undefined>();

  const { act, error } = useAction(state.reload);

  return (
    <div className="stack">
      <Section title="Receiver">
        <div className="row">
          <span>Webhook receiver</span>
          <Switch
            label="Webhook receiver"
            checked={state.data?.enabled ?? false}
            onChange={(enabled) => act(() => api.setReceiver(enabled))}
          />
          <span className="muted">
            {state.data?.enabled
              ? "On: subscriptions that are active accept deliveries."
              : "Off: every webhook endpoint answers 403 and runs nothing."}
          </span>
        </div>
        <ErrorBox error={error ?? state.error} />
      </Section>
      <Section
        title="Subscriptions"
        actions={
          <button type="button" onClick={() => setEditing("new")}>
            New subscription
          </button>
        }
      >
        {editing && (
          <SubscriptionForm
            key={editing === "new" ? "" : editing.name}
            existing={editing === "new" ? undefined : editing}
            onDone={async () => {
              setEditing(undefined);
              await state.reload();
            }}
          />
        )}
        {state.data?.subscriptions.length === 0 && <p className="muted">No subscriptions yet.</p>}
        {state.data?.subscriptions.map((s) => (
          <SubscriptionCard
            key={s.name}
            subscription={s}
            onEdit={() => setEditing(s)}
            onActive={(active) => act(() => api.updateSubscription(s.name, { active }))}
            onDelete={() => act(() => api.deleteSubscription(s.name))}
          />
        ))}
      </Section>
    </div>
  );
}

function SubscriptionCard(props: {
  subscription: WebhookSubscription;
  onEdit: () => void;
  onActive: (active: boolean) => Promise<void>;
  onDelete: () => Promise<void>;
}) {
  const s = props.subscription;
  const url = webhookUrl(s.name);
  const [copied, setCopied] = useState(false);
  const curl = `curl -X POST ${url} \\\n  -H 'Content-Type: application/json' \\\n  -d '{"event_type": "test", "message": "hello"}'`;
  return (
    <article className="subscription" aria-label={`Subscription ${s.name}`}>
      <div className="card-head">
        <h3>{s.name}</h3>
        <span className="row">
          Active <Switch label={`Active ${s.name}`} checked={s.active} onChange={props.onActive} />
        </span>
      </div>
      {s.description && <p>{s.description}</p>}
      <dl className="facts">
        <dt>Events</dt>
        <dd>{s.events || "all"}</dd>
        <dt>Deliver to</dt>
        <dd>
          {s.deliverTo}
          {s.deliverOnly ? " (deliver only: no model call)" : ""}
        </dd>
        <dt>Verification</dt>
        <dd>{s.verification.kind === "none" ? "none" : `${s.verification.kind} (secret set)`}</dd>
        <dt>Endpoint</dt>
        <dd className="endpoint">
          <code>{url}</code>
          <button
            type="button"
            onClick={async () => {
              await navigator.clipboard?.writeText(url).catch(() => undefined);
              setCopied(true);
            }}
          >
            {copied ? "Copied" : "Copy URL"}
          </button>
        </dd>
      </dl>
      <details>
        <summary>Example curl</summary>
        <pre>{curl}</pre>
      </details>
      <RecentRuns name={s.name} />
      <div className="row">
        <button type="button" onClick={props.onEdit}>
          Edit {s.name}
        </button>
        <ConfirmDelete what={s.name} onConfirm={props.onDelete} />
      </div>
    </article>
  );
}

function RecentRuns({ name }: { name: string }) {
  const runs = useLoad(() => api.subscriptionRuns(name), [name]);
  useEffect(() => {
    const timer = setInterval(() => void runs.reload(), 3000);
    return () => clearInterval(timer);
  }, [runs.reload]);
  return (
    <details>
      <summary>Recent runs ({runs.data?.length ?? 0})</summary>
      <ErrorBox error={runs.error} />
      {runs.data && runs.data.length === 0 && <p className="muted">No runs yet.</p>}
      <ul className="runs">
        {runs.data?.map((r: WebhookRun) => (
          <li key={r.id}>
            <span className={`status ${r.status}`}>{r.status}</span> <code>{r.event}</code>{" "}
            <time dateTime={r.createdAt}>{new Date(r.createdAt).toLocaleString()}</time>
            {r.error && <span className="error"> {r.error}</span>}
          </li>
        ))}
      </ul>
    </details>
  );
}

function eventOf(payload: Record<string, unknown>): string {
  return typeof payload.event_type === "string" && payload.event_type ? payload.event_type : "unknown";
}

function SubscriptionForm(props: { existing: WebhookSubscription | undefined; onDone: () => Promise<void> }) {
  const e = props.existing;
  const [name, setName] = useState(e?.name ?? "");
  const [description, setDescription] = useState(e?.description ?? "");
  const [events, setEvents] = useState(e?.events ?? "");
  const [deliverTo, setDeliverTo] = useState<(typeof TARGETS)[number]>(e?.deliverTo ?? "All channels");
  const [deliverOnly, setDeliverOnly] = useState(e?.deliverOnly ?? false);
  const [prompt, setPrompt] = useState(e?.prompt ?? "");
  const [sample, setSample] = useState(SAMPLE);
  const [verification, setVerification] = useState<VerificationKind>(e?.verification.kind ?? "none");
  const [secret, setSecret] = useState("");
  const [signatureHeader, setSignatureHeader] = useState(e?.verification.signatureHeader ?? "X-Signature");
  const [timestampHeader, setTimestampHeader] = useState(e?.verification.timestampHeader ?? "X-Timestamp");
  const [tolerance, setTolerance] = useState(String(e?.verification.toleranceSeconds ?? 300));
  const [error, setError] = useState<unknown>();
  const fields = fieldErrors(error);

  // The form opens above the list: the focus moves to its first field, and back to the button that
  // opened it (New subscription, or the card's Edit) when it closes.
  const form = useRef<HTMLFormElement>(null);
  useEffect(() => {
    const opener = document.activeElement instanceof HTMLElement ? document.activeElement : null;
    form.current?.querySelector<HTMLElement>("input, select, textarea")?.focus();
    return () => {
      if (opener?.isConnected) opener.focus();
    };
  }, []);

  const slug = normalizeWebhookName(name);
  const nameProblem = !e && name.trim() !== "" && !WEBHOOK_NAME_PATTERN.test(slug) ? WEBHOOK_NAME_RULE : undefined;
  const preview = useMemo(() => {
    let payload: unknown;
    try {
      payload = JSON.parse(sample);
    } catch (err) {
      return { error: `The sample is not JSON: ${(err as Error).message}` };
    }
    if (typeof payload !== "object" || payload === null || Array.isArray(payload))
      return { error: "The sample must be a JSON object, like a delivery's body." };
    const p = payload as Record<string, unknown>;
    return { text: renderPrompt(prompt, p, eventOf(p), slug || "name") };
  }, [prompt, sample, slug]);
  const noPlaceholders = prompt.trim() !== "" && !/\{[^{}\s]+\}/.test(prompt);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    if (nameProblem) return;
    try {
      const body = {
        description,
        events,
        deliverTo,
        deliverOnly,
        prompt,
        verification: {
          kind: verification,
          // Left empty while editing: the stored secret stays.
          ...(secret ? { secret } : {}),
          ...(verification === "hmac" ? { signatureHeader, timestampHeader, toleranceSeconds: Number(tolerance) } : {}),
        },
      };
      if (e) await api.updateSubscription(e.name, body);
      else await api.createSubscription({ name, ...body });
      await props.onDone();
    } catch (err) {
      setError(err);
    }
  };

  return (
    <form
      ref={form}
      className="form subscription-form"
      onSubmit={submit}
      aria-label={e ? `Edit ${e.name}` : "New subscription"}
      onKeyDown={(ev) => {
        if (ev.key === "Escape") void props.onDone();
      }}
    >
      <h3>{e ? `Edit ${e.name}` : "New subscription"}</h3>
      {!e && (
        <div className="field">
          <label htmlFor="sub-name">Name</label>
          <input
            id="sub-name"
            required
            value={name}
            aria-invalid={nameProblem || fields.name ? true : undefined}
            aria-describedby="sub-name-hint"
            onChange={(ev) => setName(ev.target.value)}
          />
          <span id="sub-name-hint" className="muted">
            Lowercase; spaces become hyphens. Endpoint: <code>{webhookUrl(slug || "<name>")}</code>
          </span>
          {(nameProblem ?? fields.name) && (
            <span className="error" role="alert">
              {nameProblem ?? fields.name}
            </span>
          )}
        </div>
      )}
      <div className="field">
        <label htmlFor="sub-description">Description</label>
        <input id="sub-description" value={description} onChange={(ev) => setDescription(ev.target.value)} />
      </div>
      <div className="field">
        <label htmlFor="sub-events">Events</label>
        <input
          id="sub-events"
          value={events}
          placeholder="push,issues (empty accepts all)"
          onChange={(ev) => setEvents(ev.target.value)}
        />
      </div>
      <div className="field">
        <label htmlFor="sub-deliver-to">Deliver to</label>
        <select
          id="sub-deliver-to"
          value={deliverTo}
          onChange={(ev) => setDeliverTo(ev.target.value as (typeof TARGETS)[number])}
        >
          {TARGETS.map((t) => (
            <option key={t}>{t}</option>
          ))}
        </select>
      </div>
      <div className="field checkbox">
        <input
          id="sub-deliver-only"
          type="checkbox"
          checked={deliverOnly}
          onChange={(ev) => setDeliverOnly(ev.target.checked)}
        />
        <label htmlFor="sub-deliver-only">Deliver only (post the rendered prompt; no model call)</label>
      </div>
      <div className="field">
        <label htmlFor="sub-prompt">Prompt</label>
        <textarea
          id="sub-prompt"
          rows={4}
          value={prompt}
          placeholder="Empty: the agent gets the whole payload. {a.b} inserts a field, {__raw__} the payload."
          onChange={(ev) => setPrompt(ev.target.value)}
        />
        {noPlaceholders && (
          <span className="warning" role="note">
            This prompt has no {"{placeholders}"}: only its text is sent, not the payload. Add {"{__raw__}"} or a field
            like {"{status}"} to include it.
          </span>
        )}
      </div>
      <div className="field">
        <label htmlFor="sub-verification">Verification</label>
        <select
          id="sub-verification"
          value={verification}
          onChange={(ev) => setVerification(ev.target.value as VerificationKind)}
        >
          {VERIFICATIONS.map((v) => (
            <option key={v.kind} value={v.kind}>
              {v.label}
            </option>
          ))}
        </select>
      </div>
      {verification !== "none" && (
        <div className="field">
          <label htmlFor="sub-secret">Secret</label>
          <input
            id="sub-secret"
            type="password"
            autoComplete="new-password"
            value={secret}
            placeholder={e?.verification.secretSet ? "(kept: type to replace)" : "at least 8 characters"}
            aria-invalid={fields["verification.secret"] ? true : undefined}
            onChange={(ev) => setSecret(ev.target.value)}
          />
          {fields["verification.secret"] && (
            <span className="error" role="alert">
              {fields["verification.secret"]}
            </span>
          )}
        </div>
      )}
      {verification === "hmac" && (
        <>
          <div className="field">
            <label htmlFor="sub-sig-header">Signature header</label>
            <input id="sub-sig-header" value={signatureHeader} onChange={(ev) => setSignatureHeader(ev.target.value)} />
          </div>
          <div className="field">
            <label htmlFor="sub-ts-header">Timestamp header (Unix seconds)</label>
            <input id="sub-ts-header" value={timestampHeader} onChange={(ev) => setTimestampHeader(ev.target.value)} />
          </div>
          <div className="field">
            <label htmlFor="sub-tolerance">Timestamp tolerance (seconds)</label>
            <input
              id="sub-tolerance"
              type="number"
              min={1}
              max={3600}
              value={tolerance}
              onChange={(ev) => setTolerance(ev.target.value)}
            />
          </div>
        </>
      )}
      <div className="field">
        <label htmlFor="sub-sample">Sample payload (for the preview)</label>
        <textarea id="sub-sample" rows={5} value={sample} onChange={(ev) => setSample(ev.target.value)} />
      </div>
      <figure className="field">
        <figcaption>Preview</figcaption>
        {preview.error ? <span className="error">{preview.error}</span> : <pre className="preview">{preview.text}</pre>}
      </figure>
      {/* Field messages show under their field; the summary is for the rest. */}
      <ErrorBox error={Object.keys(fields).length > 0 ? undefined : error} />
      <div className="row">
        <button type="submit" disabled={Boolean(nameProblem)}>
          {e ? "Save subscription" : "Create subscription"}
        </button>
        <button type="button" onClick={() => void props.onDone()}>
          Cancel
        </button>
      </div>
    </form>
  );
}
