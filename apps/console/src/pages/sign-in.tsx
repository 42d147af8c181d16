import { signInErrorMessage } from "@agentplane/contracts/sign-in-errors";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { type FormEvent, useState } from "react";
import { useNavigate, useSearchParams } from "react-router";
import { call } from "../api/client.ts";
import { signIn } from "../api/session.ts";
import { Button, ErrorNote, TextField, useDocumentTitle } from "../components/ui.tsx";
import { safeNext, serverPageAfterSignIn } from "../lib/sign-in-path.ts";

export function SignInPage() {
  const [params] = useSearchParams();
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const [token, setToken] = useState("");
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  useDocumentTitle("Sign in");
  // A code from the address, shown in this app's own words: never text a link could make up.
  const signInError = signInErrorMessage(params.get("error"));
  const installation = useQuery({
    queryKey: ["installation"],
    queryFn: () => call("getInstallation"),
    retry: false,
  });

  async function submit(e: FormEvent) {
    e.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      const opened = await signIn(token);
      setToken("");
      queryClient.clear();
      queryClient.setQueryData(["session"], opened);
      const next = safeNext(params.get("next"));
      // The device sign-in's approval page is the server's, not a route of this app.
      const serverPage = serverPageAfterSignIn(next);
      if (serverPage) window.location.assign(serverPage);
      else navigate(next, { replace: true });
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  return (
    <main className="mx-auto mt-24 max-w-md rounded-lg border border-slate-200 bg-white p-6 shadow-sm dark:border-slate-700 dark:bg-slate-900">
      <h1 className="mb-4 text-xl font-semibold">Sign in to Agentplane</h1>
      {installation.data?.status === "unactivated" ? (
        <section aria-label="Activation" className="mb-4 text-sm">
          <p className="mb-2">This installation is not activated yet. To activate it:</p>
          <ol className="list-decimal pl-5">
            <li>
              Run <code>POST /v1/installation/activation</code> (or the CLI's login) to get a user code.
            </li>
            <li>
              Open <a href="/activate">/activate</a> and enter the user code and the setup code printed at start.
            </li>
            <li>Paste the owner token you receive below.</li>
          </ol>
        </section>
      ) : null}
      {signInError ? (
        <p role="alert" className="mb-3 text-sm text-red-700 dark:text-red-300">
          {signInError}
        </p>
      ) : null}
      {installation.data?.oidcSignIn ? (
        <p className="mb-4">
          <a
            className="inline-flex rounded-md bg-indigo-600 px-3 py-1.5 text-sm font-medium text-white no-underline hover:bg-indigo-700"
            href={`/sign-in/oidc?next=${encodeURIComponent(safeNext(params.get("next")))}`}
          >
            Sign in with your identity provider
          </a>
          <span className="mt-3 block text-sm text-slate-600 dark:text-slate-300">Or, for automation:</span>
        </p>
      ) : null}
      <form onSubmit={submit}>
        <TextField
          label="API token"
          hint="Exchanged once for a browser session; the token is not kept by this page."
          type="password"
          autoComplete="off"
          required
          value={token}
          onChange={(e) => setToken(e.target.value)}
        />
        <ErrorNote error={error} />
        <Button type="submit" variant="primary" disabled={busy || !token.trim()}>
          {busy ? "Signing in…" : "Sign in"}
        </Button>
      </form>
      <p className="mt-4 text-sm">
        <a href="/docs">API reference</a>
      </p>
    </main>
  );
}
