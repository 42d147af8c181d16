import tailwindcss from "@tailwindcss/vite";
import react from "@vitejs/plugin-react";
import { defineConfig } from "vite";

/** Built to static files the gateway serves at `/`; every asset bundled (nothing fetched from elsewhere). */
export default defineConfig({
  root: import.meta.dirname,
  plugins: [react(), tailwindcss()],
  build: {
    outDir: "dist",
    emptyOutDir: true,
    assetsInlineLimit: 0,
    chunkSizeWarningLimit: 1000,
    // Quiet builds at start: the timing report is for tuning, not for every launch.
    rolldownOptions: { checks: { pluginTimings: false } },
  },
  logLevel: "warn",
});
