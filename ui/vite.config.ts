/**
 * Builds the console (ui/) into dist/ui, which `rotscope serve` serves at `/`
 * (src/api/console.ts). `npm run build` runs it; `npm run dev:ui` serves it with hot reload,
 * proxying /api to a `rotscope serve` on ROTSCOPE_URL (default http://127.0.0.1:4318).
 */
import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  plugins: [react()],
  build: {
    outDir: fileURLToPath(new URL('../dist/ui', import.meta.url)),
    emptyOutDir: true,
    // No inline scripts or styles: the console's CSP allows 'self' only.
    assetsInlineLimit: 0,
    sourcemap: true,
  },
  server: {
    proxy: { '/api': process.env.ROTSCOPE_URL ?? 'http://127.0.0.1:4318' },
  },
});
