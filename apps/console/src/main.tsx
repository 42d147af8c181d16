import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { RouterProvider } from "react-router";
import { onSessionEnded } from "./api/client.ts";
import { ApiError } from "./lib/problem.ts";
import { signInPath } from "./lib/sign-in-path.ts";
import { isPublicPath } from "./people-routes.tsx";
import { createConsoleRouter } from "./router.tsx";
import "./styles.css";

const queryClient = new QueryClient({
  defaultOptions: {
    queries: {
      // A 4xx does not get better by asking again; a lost connection might.
      retry: (count, err) => !(err instanceof ApiError && err.status < 500) && count < 2,
      refetchOnWindowFocus: false,
    },
  },
});
const router = createConsoleRouter();

// Any 401: the session ended; sign in again and come back to this page.
onSessionEnded(() => {
  const here = `${window.location.pathname}${window.location.search}`;
  if (isPublicPath(window.location.pathname)) return;
  queryClient.clear();
  void router.navigate(signInPath(here), { replace: true });
});

createRoot(document.getElementById("root")!).render(
  <StrictMode>
    <QueryClientProvider client={queryClient}>
      <RouterProvider router={router} />
    </QueryClientProvider>
  </StrictMode>,
);
