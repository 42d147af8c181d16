import { type FormEvent, StrictMode, useEffect, useRef, useState } from "react";
import { createRoot } from "react-dom/client";
import { type AgentProfile, ApiError, UnreachableError } from "../../client/api.ts";
import { api, session } from "./base.ts";
import { ChannelsPage } from "./pages/channels.tsx";
import { ChatPage } from "./pages/chat.tsx";
import { MemoryPage } from "./pages/memory.tsx";
import { ProfilePage } from "./pages/profile.tsx";
import { SchedulesPage } from "./pages/schedules.tsx";
import { UsagePage } from "./pages/usage.tsx";
import { WebhooksPage } from "./pages/webhooks.tsx";
import { errorText } from "./ui.tsx";
import "./styles.css";

const PAGES = [
  { id: "chat", title: "Chat" },
  { id: "profile", title: "Profile" },
  { id: "webhooks", title: "Webhooks" },
  { id: "schedules", title: "Schedules" },
  { id: "memory", title: "Memory" },
  { id: "channels", title: "Channels" },
  { id: "usage", title: "Usage" },
] as const;
type PageId = (typeof PAGES)[number]["id"];

/** Hash routes (`#/chat/<thread>`): the page works the same at `/` and behind `/agent/`. */
function readRoute(): { page: PageId; arg: string | undefined } {
  const [, page, arg] = window.location.hash.split("/");
  const known = PAGES.find((p) => p.id === page);
  return { page: known?.id ?? "chat", arg: arg ? decodeURIComponent(arg) : undefined };
}

const RETRY_MS = 2000;

function App() {
  const [route, setRoute] = useState(readRoute);
  const [profile, setProfile] = useState<AgentProfile | undefined>();
  const [unreachable, setUnreachable] = useState<string | undefined>();
  const [needsToken, setNeedsToken] = useState(false);
  const [attempt, setAttempt] = useState(0);

  useEffect(() => {
    const onHash = () => setRoute(readRoute());
    window.addEventListener("hashchange", onHash);
    return () => window.removeEventListener("hashchange", onHash);
  }, []);

  // The profile is the first call: while it fails the page says so and tries again.
  // biome-ignore lint/correctness/useExhaustiveDependencies: a new attempt after a token was entered
  useEffect(() => {
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const load = async () => {
      try {
        // Behind the gateway: the console's session, when this browser has one.
        if (session.fronted) await session.restore();
        const p = await api.profile();
        if (stopped) return;
        setProfile(p);
        setUnreachable(undefined);
      } catch (err) {
        if (stopped) return;
        // Behind the platform's gateway: no or a refused token. Ask for one instead of retrying.
        if (
          err instanceof ApiError &&
          (err.status === 401 || err.status === 403 || err.status === 404) &&
          session.fronted
        ) {
          setNeedsToken(true);
          setUnreachable(undefined);
          return;
        }
        setUnreachable(
          err instanceof UnreachableError ? err.message : `The agent runtime cannot be reached: ${errorText(err)}`,
        );
        timer = setTimeout(load, RETRY_MS);
      }
    };
    void load();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [attempt]);

  const current = PAGES.find((p) => p.id === route.page) ?? PAGES[0];
  useEffect(() => {
    document.title = `${current.title} · ${profile?.name ?? "Agent"}`;
  }, [current, profile]);

  // Another page chosen: the focus moves to its content (announced by its heading), as a page
  // load would put it at the top, instead of staying on the navigation link.
  const mainRef = useRef<HTMLElement>(null);
  const shownPage = useRef(route.page);
  useEffect(() => {
    if (shownPage.current === route.page) return;
    shownPage.current = route.page;
    mainRef.current?.focus();
  }, [route.page]);

  return (
    <>
      <header className="top">
        {/* A button, not a #main link: the hash holds the route. */}
        <button type="button" className="skip-link" onClick={() => mainRef.current?.focus()}>
          Skip to content
        </button>
        <span className="brand">{profile ? profile.name : "Agent"}</span>
        <nav aria-label="Pages">
          {PAGES.map((p) => (
            <a key={p.id} href={`#/${p.id}`} aria-current={p.id === route.page ? "page" : undefined}>
              {p.title}
            </a>
          ))}
        </nav>
      </header>
      <main id="main" ref={mainRef} tabIndex={-1} aria-labelledby="page-title">
        <h1 id="page-title" className="visually-hidden">
          {current.title}
        </h1>
        {unreachable && (
          <p className="error" role="alert">
            {unreachable}. Retrying…
          </p>
        )}
        {needsToken && !profile && (
          <TokenForm
            onSignedIn={() => {
              setNeedsToken(false);
              setAttempt((n) => n + 1);
            }}
          />
        )}
        {profile && <Page page={route.page} arg={route.arg} profile={profile} onProfile={setProfile} />}
        {!profile && !unreachable && !needsToken && <p role="status">Loading…</p>}
      </main>
    </>
  );
}

function TokenForm(props: { onSignedIn: () => void }) {
  const [token, setToken] = useState("");
  const [refused, setRefused] = useState(false);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    if (!token.trim()) return;
    const opened = await session.signIn(token);
    setToken("");
    setRefused(!opened);
    if (opened) props.onSignedIn();
  };
  return (
    <form className="card form" onSubmit={submit}>
      <h2>Sign in to the agent</h2>
      <p>
        This agent is reached through the platform: sign in to the admin console, or paste an API token of its project (
        <code>apl_…</code>). The token is exchanged for a browser session once and not kept by this page.
      </p>
      {refused && (
        <p className="error" role="alert">
          The platform did not accept this token.
        </p>
      )}
      <label htmlFor="agent-token">API token</label>
      <input id="agent-token" type="password" value={token} onChange={(e) => setToken(e.target.value)} />
      <button type="submit">Continue</button>
    </form>
  );
}

function Page(props: {
  page: PageId;
  arg: string | undefined;
  profile: AgentProfile;
  onProfile: (p: AgentProfile) => void;
}) {
  switch (props.page) {
    case "chat":
      return <ChatPage threadId={props.arg} profile={props.profile} onProfile={props.onProfile} />;
    case "profile":
      return <ProfilePage profile={props.profile} onProfile={props.onProfile} />;
    case "webhooks":
      return <WebhooksPage />;
    case "schedules":
      return <SchedulesPage />;
    case "memory":
      return <MemoryPage />;
    case "channels":
      return <ChannelsPage />;
    case "usage":
      return <UsagePage />;
  }
}

const root = document.getElementById("root");
if (root)
  createRoot(root).render(
    <StrictMode>
      <App />
    </StrictMode>,
  );
