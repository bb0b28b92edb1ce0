import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { loadViewerScript } from './assets.ts';

/** The page script is browser JavaScript: the root tsconfig (Node, no DOM) does not check it, its own does. */
describe('report/viewer/viewer.js', () => {
  it('type-checks against the DOM and the view types under report/viewer/tsconfig.json', () => {
    const configFile = fileURLToPath(new URL('./viewer/tsconfig.json', import.meta.url));
    const config = ts.getParsedCommandLineOfConfigFile(configFile, undefined, {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (d) => {
        throw new Error(ts.flattenDiagnosticMessageText(d.messageText, '\n'));
      },
    });
    if (config === undefined) throw new Error(`cannot read ${configFile}`);
    expect(config.fileNames.map((f) => basename(f)).sort()).toEqual(['view.ts', 'viewer.js']);
    expect(config.options.checkJs).toBe(true);
    const program = ts.createProgram({ rootNames: config.fileNames, options: config.options });
    const problems = ts.getPreEmitDiagnostics(program).map((d) => {
      const where = d.file === undefined || d.start === undefined ? '' : `${basename(d.file.fileName)}:${d.file.getLineAndCharacterOfPosition(d.start).line + 1}: `;
      return `${where}${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`;
    });
    expect(problems).toEqual([]);
  });

  it('is loaded as it is on disk: the page carries the file that was checked', async () => {
    expect(await loadViewerScript()).toBe(await readFile(new URL('./viewer/viewer.js', import.meta.url), 'utf8'));
  });
});
