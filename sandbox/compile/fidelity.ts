/**
 * The enforcement-fidelity report: for every policy entry (and every implicit
 * runtime grant), what the kernel was actually told and how that differs from
 * what the policy says. Landlock attaches rights to existing inodes and applies
 * a directory's rights to everything beneath it, so the kernel must sometimes
 * grant more than the policy (`widened`), cannot grant something (`narrowed`),
 * or has nothing to attach to (`nonexistent`, `no-match`); paths that belong
 * to the harness are never granted (`reserved`). These are measured and shown,
 * never hidden.
 */
import { z } from 'zod';
import { FS_ACCESS } from '../launcher/index.ts';

export const FIDELITY_KINDS = ['exact', 'widened', 'narrowed', 'nonexistent', 'no-match', 'implicit', 'abi-limited', 'reserved'] as const;

export const GrantSchema = z
  .object({
    path: z.string().describe('Realpath of the inode the Landlock rule attaches to (applies to everything beneath a directory).'),
    access: z.array(z.enum(FS_ACCESS)).describe('Rights granted on it, before filtering to the kernel ABI.'),
  })
  .describe('One Landlock path-beneath grant.');

export const FidelityEntrySchema = z
  .object({
    axis: z.enum(['read', 'write', 'execute', 'network', 'kernel']).describe('Policy axis; `kernel` for ABI limits.'),
    source: z.enum(['policy', 'implicit', 'kernel']).describe('Where the entry comes from.'),
    entry: z.string().describe('The policy pattern (normalised), network item, or kernel feature.'),
    kind: z
      .enum(FIDELITY_KINDS)
      .describe(
        'exact: the kernel allows what the entry says, no more; widened: it allows more (see note); narrowed: it denies ' +
          'part of what the entry allows; nonexistent / no-match: nothing to attach a rule to; implicit: runtime grant ' +
          'outside the policy; abi-limited: the kernel ABI cannot express it; reserved: the entry (or a grant, or a ' +
          'symlink target) lies within a path reserved for the harness and is not granted, or the entry\'s rules cover ' +
          'one and the note says how the harness keeps it out of reach instead.',
      ),
    granted: z.array(GrantSchema).describe('The grants this facet contributed.'),
    network: z
      .object({
        connectTcp: z.array(z.number().int()).describe('TCP ports allowed for connect.'),
        bindTcp: z.array(z.number().int()).describe('TCP ports allowed for bind.'),
        socketDomains: z.array(z.enum(['inet', 'inet6'])).describe('Socket domains allowed beyond AF_UNIX.'),
      })
      .optional()
      .describe('Network grants, for network facets.'),
    note: z.string().describe('What the difference is, in words a reader can check.'),
  })
  .describe('One facet of one policy entry: a policy entry can yield several (e.g. an exact file grant and a widened removal grant).');

export const FidelityReportSchema = z
  .object({
    abi: z.number().int().describe('Landlock ABI the rules were compiled for.'),
    entries: z.array(FidelityEntrySchema).describe('Every facet, policy entries first, in policy order.'),
    summary: z
      .object({
        facets: z.number().int().describe('Number of entries.'),
        rules: z.number().int().describe('Number of Landlock filesystem rules emitted.'),
        byKind: z.record(z.enum(FIDELITY_KINDS), z.number().int()).describe('Entries per kind.'),
      })
      .describe('Counts for tables.'),
  })
  .describe('How faithfully the kernel rules enforce the policy.');

export type Grant = z.infer<typeof GrantSchema>;
export type FidelityKind = (typeof FIDELITY_KINDS)[number];
export type FidelityEntry = z.infer<typeof FidelityEntrySchema>;
export type FidelityReport = z.infer<typeof FidelityReportSchema>;

/** Counts per kind; every kind in FIDELITY_KINDS (`reserved` included) is present, zero when unused. */
export function summarize(entries: readonly FidelityEntry[], rules: number): FidelityReport['summary'] {
  const byKind = Object.fromEntries(FIDELITY_KINDS.map((k) => [k, 0])) as Record<FidelityKind, number>;
  for (const e of entries) byKind[e.kind] += 1;
  return { facets: entries.length, rules, byKind };
}

const KIND_LABEL: Record<FidelityKind, string> = {
  exact: 'exact',
  widened: 'WIDENED',
  narrowed: 'NARROWED',
  nonexistent: 'nonexistent',
  'no-match': 'no match',
  implicit: 'implicit',
  'abi-limited': 'ABI-LIMITED',
  reserved: 'RESERVED',
};

export interface RenderOptions {
  /** Leave out `exact` and `implicit` facets (they need no attention). */
  onlyDifferences?: boolean;
  /** Grants shown per facet before `... N more` (default 6; the JSON report has them all). */
  maxGrants?: number;
}

/** Plain text, one block per facet; pure so the CLI and reports share it. */
export function renderFidelityReport(report: FidelityReport, options: RenderOptions = {}): string {
  const { byKind } = report.summary;
  const counts = FIDELITY_KINDS.filter((k) => byKind[k] > 0)
    .map((k) => `${k} ${byKind[k]}`)
    .join(', ');
  const lines = [
    `enforcement fidelity (Landlock ABI ${report.abi}): ${report.summary.facets} facets, ${report.summary.rules} rules${counts === '' ? '' : ` — ${counts}`}`,
  ];
  for (const e of report.entries) {
    if (options.onlyDifferences === true && (e.kind === 'exact' || e.kind === 'implicit')) continue;
    lines.push(`  ${KIND_LABEL[e.kind].padEnd(11)} ${e.axis.padEnd(7)} ${e.entry}`);
    for (const g of e.granted.slice(0, options.maxGrants ?? 6)) lines.push(`${' '.repeat(22)}-> ${g.path}  ${g.access.join(',')}`);
    const hidden = e.granted.length - (options.maxGrants ?? 6);
    if (hidden > 0) lines.push(`${' '.repeat(22)}   ... ${hidden} more`);
    if (e.network !== undefined) {
      const n = e.network;
      lines.push(`${' '.repeat(22)}-> connect ${n.connectTcp.join(',') || '-'}  bind ${n.bindTcp.join(',') || '-'}  sockets ${n.socketDomains.join(',') || 'unix only'}`);
    }
    if (e.note !== '') lines.push(`${' '.repeat(22)}${e.note}`);
  }
  return `${lines.join('\n')}\n`;
}
