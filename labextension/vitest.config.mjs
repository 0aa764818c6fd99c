import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    environment: 'node',
    // @jupyter/ydoc's own insertCells reads each new cell before adding it to the document;
    // Yjs warns about that on every call. It is the library's, not ours: keep the log readable.
    onConsoleLog: log => !log.includes('Add Yjs type to a document before reading data')
  }
});
