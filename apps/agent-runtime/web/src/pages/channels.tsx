import { type FormEvent, useState } from "react";
import { api } from "../base.ts";
import { ConfirmDelete, ErrorBox, Section, Switch, useAction, useLoad } from "../ui.tsx";

/** The API's rule for a channel id (the path parameter of PATCH /agents/team-chat/channels/{id}). */
const CHANNEL_ID = /^[A-Z0-9]{2,32}$/;

/** Links a channel by its id, as inviting the bot does; the API looks its name up. */
function LinkChannel(props: { onLink: (id: string) => Promise<void> }) {
  const [id, setId] = useState("");
  const [invalid, setInvalid] = useState<string>();
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const value = id.trim().toUpperCase();
    if (!CHANNEL_ID.test(value)) {
      setInvalid("A chat channel id such as C0123ABCD (2 to 32 letters and digits)");
      return;
    }
    setInvalid(undefined);
    await props.onLink(value);
    setId("");
  };
  return (
    <form className="row" onSubmit={submit} noValidate>
      <label htmlFor="link-channel">Link a channel by id</label>
      <input
        id="link-channel"
        value={id}
        placeholder="C0123ABCD"
        aria-invalid={invalid ? true : undefined}
        aria-describedby={invalid ? "link-channel-error" : undefined}
        onChange={(e) => setId(e.target.value)}
      />
      <button type="submit">Link</button>
      {invalid && (
        <span id="link-channel-error" className="error" role="alert">
          {invalid}
        </span>
      )}
    </form>
  );
}

/** Linked team-chat channels and the main one (spec: the channel flagged on the channels view). */
export function ChannelsPage() {
  const state = useLoad(api.teamChat);
  const channels = useLoad(api.channels);
  const { act, error } = useAction(async () => {
    await Promise.all([channels.reload(), state.reload()]);
  });
  const [confirmReset, setConfirmReset] = useState(false);
  const chat = state.data;
  if (chat?.state === "off") {
    return (
      <Section title="Channels">
        <p className="empty">
          Team chat is not configured (no <code>CHAT_BOT_TOKEN</code>). Deliveries to <q>All channels</q> and{" "}
          <q>Team chat</q> go to the web chat.
        </p>
      </Section>
    );
  }
  return (
    <div className="stack">
      <Section title="Team chat">
        <ErrorBox error={state.error} />
        {chat && (
          <dl className="facts">
            <dt>State</dt>
            <dd>
              {chat.state}
              {chat.detail ? `: ${chat.detail}` : ""}
            </dd>
            <dt>Mode</dt>
            <dd>
              {chat.mode === "team"
                ? "Team: deliveries go to the main channel (else the oldest linked one)"
                : "Personal: deliveries go to the owner's direct messages"}
            </dd>
            <dt>Owner</dt>
            <dd>
              {chat.owner.id ?? (chat.owner.pairingPending ? "waiting for the pairing code" : "not paired")}
              {chat.owner.source === "env" ? " (set by CHAT_OWNER_ID)" : ""}
              {chat.owner.source === "paired" ? " (paired)" : ""}
            </dd>
          </dl>
        )}
        {chat?.owner.pairingPending && (
          <p className="muted">Send the bot the one-time pairing code from the runtime's log by direct message.</p>
        )}
        {chat?.owner.source === "paired" &&
          (confirmReset ? (
            <fieldset className="confirm">
              <legend>Forget the owner? The runtime logs a new pairing code.</legend>
              <button
                type="button"
                className="danger"
                onClick={async () => {
                  setConfirmReset(false);
                  await act(() => api.resetOwner());
                }}
              >
                Yes, forget the owner
              </button>
              <button type="button" onClick={() => setConfirmReset(false)}>
                Cancel
              </button>
            </fieldset>
          ) : (
            <button type="button" className="danger" onClick={() => setConfirmReset(true)}>
              Reset owner
            </button>
          ))}
      </Section>
      <Section title="Channels">
        <ErrorBox error={error ?? channels.error} />
        {chat?.mode === "personal" && (
          <p className="muted">Personal mode: channels are not conversations; deliveries go to the owner.</p>
        )}
        {channels.data?.length === 0 && (
          <p className="empty">No channel is linked yet: invite the bot to one, or link it here.</p>
        )}
        <ul className="notes">
          {channels.data?.map((c) => (
            <li key={c.id} className="row">
              <span>
                #{c.name ?? c.id} <span className="muted">linked {new Date(c.linkedAt).toLocaleString()}</span>
              </span>
              <span className="row">
                Main{" "}
                <Switch
                  label={`Main channel ${c.name ?? c.id}`}
                  checked={c.main}
                  onChange={(main) => act(() => api.updateChannel(c.id, { main }))}
                />
              </span>
              <ConfirmDelete
                what={`link to #${c.name ?? c.id}`}
                onConfirm={() => act(() => api.updateChannel(c.id, { linked: false }))}
              />
            </li>
          ))}
        </ul>
        {chat?.mode === "team" && <LinkChannel onLink={(id) => act(() => api.updateChannel(id, { linked: true }))} />}
      </Section>
    </div>
  );
}
