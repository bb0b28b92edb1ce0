/**
 * What an image reference promises (its OS release and Python version), read
 * off the reference itself, so a substitution can say where the substitute
 * differs from what the Dockerfile asked for. Pure: names in, facts out; a
 * fact the name does not determine (`python:3.13` without a Debian codename)
 * stays unknown and is never compared.
 */
import { z } from 'zod';
import { normalizeImageRef } from './base-map.ts';

export const ImageFactsSchema = z
  .object({
    os: z.string().optional().describe('Distribution, e.g. `debian` or `ubuntu`'),
    osVersion: z.string().optional().describe('Release number, e.g. `12` or `24.04`'),
    python: z.string().optional().describe('major.minor of the default python3'),
  })
  .strict();

export type ImageFacts = z.infer<typeof ImageFactsSchema>;

/** Debian codenames and release numbers; the python3 each ships. */
const DEBIAN: Record<string, { version: string; python: string }> = {
  buster: { version: '10', python: '3.7' },
  bullseye: { version: '11', python: '3.9' },
  bookworm: { version: '12', python: '3.11' },
  trixie: { version: '13', python: '3.13' },
};

/** Ubuntu releases (number and codename) and the python3 each ships. */
const UBUNTU: Record<string, { version: string; python: string }> = {
  focal: { version: '20.04', python: '3.8' },
  jammy: { version: '22.04', python: '3.10' },
  noble: { version: '24.04', python: '3.12' },
};

function debianRelease(word: string): { version: string; python: string } | undefined {
  const byName = DEBIAN[word];
  if (byName !== undefined) return byName;
  return Object.values(DEBIAN).find((r) => r.version === word.split('.')[0]);
}

function ubuntuRelease(word: string): { version: string; python: string } | undefined {
  return UBUNTU[word] ?? Object.values(UBUNTU).find((r) => r.version === word);
}

/** Facts a reference determines: `python:3.13-slim-bookworm`, `ubuntu:24.04`, `debian:12`, t-bench's `…/ubuntu-24-04:…` and `…/python-3-13:…`. */
export function requestedImageFacts(ref: string): ImageFacts {
  const normal = normalizeImageRef(ref).replace(/@sha256:[0-9a-f]+$/, '');
  const colon = normal.lastIndexOf(':');
  const repo = colon > normal.lastIndexOf('/') ? normal.slice(0, colon) : normal;
  const tag = colon > normal.lastIndexOf('/') ? normal.slice(colon + 1) : 'latest';
  const name = repo.slice(repo.lastIndexOf('/') + 1);

  if (repo === 'python') {
    const m = /^(\d+\.\d+)(?:\.\d+)?(?:-.*)?$/.exec(tag);
    const codename = tag.split('-').find((w) => DEBIAN[w] !== undefined);
    const release = codename === undefined ? undefined : DEBIAN[codename];
    return {
      ...(release === undefined ? {} : { os: 'debian', osVersion: release.version }),
      ...(m?.[1] === undefined ? {} : { python: m[1] }),
    };
  }
  if (repo === 'ubuntu') {
    const release = ubuntuRelease(tag.split('-')[0] ?? '');
    return release === undefined ? { os: 'ubuntu' } : { os: 'ubuntu', osVersion: release.version, python: release.python };
  }
  if (repo === 'debian') {
    const release = debianRelease(tag.split('-')[0] ?? '');
    return release === undefined ? { os: 'debian' } : { os: 'debian', osVersion: release.version, python: release.python };
  }
  // Terminal-Bench's base images name the release in the repository: ubuntu-24-04, python-3-13.
  const tbenchUbuntu = /^ubuntu-(\d+)-(\d+)$/.exec(name);
  if (tbenchUbuntu !== null) {
    const release = ubuntuRelease(`${tbenchUbuntu[1] ?? ''}.${tbenchUbuntu[2] ?? ''}`);
    return release === undefined ? { os: 'ubuntu' } : { os: 'ubuntu', osVersion: release.version, python: release.python };
  }
  const tbenchPython = /^python-(\d+)-(\d+)$/.exec(name);
  if (tbenchPython !== null) return { python: `${tbenchPython[1] ?? ''}.${tbenchPython[2] ?? ''}` };
  return {};
}

/** `os ubuntu 24.04 → debian 12`, `python 3.12 → 3.11`: every fact both sides know and disagree on. */
export function factDifferences(requested: ImageFacts, provided: ImageFacts): string[] {
  const out: string[] = [];
  const os = (f: ImageFacts): string | undefined => (f.os === undefined ? undefined : [f.os, f.osVersion].filter(Boolean).join(' '));
  const reqOs = os(requested);
  const provOs = os(provided);
  const osDiffers =
    requested.os !== undefined &&
    provided.os !== undefined &&
    (requested.os !== provided.os || (requested.osVersion !== undefined && provided.osVersion !== undefined && requested.osVersion !== provided.osVersion));
  if (osDiffers && reqOs !== undefined && provOs !== undefined) out.push(`os ${reqOs} → ${provOs}`);
  if (requested.python !== undefined && provided.python !== undefined && requested.python !== provided.python) {
    out.push(`python ${requested.python} → ${provided.python}`);
  }
  return out;
}

export const SubstitutionRecordSchema = z
  .object({
    from: z.string().describe('The image as the Dockerfile named it (after ARG expansion)'),
    to: z.string().describe('The image built from instead'),
    via: z.enum(['map', 'recipe']).optional().describe('map: the base-image map; recipe: a dataset base recipe built for it'),
    recipe: z.string().optional().describe('The recipe file, relative to its dataset root'),
    requested: ImageFactsSchema.optional(),
    provided: ImageFactsSchema.optional(),
    differs: z.array(z.string()).optional().describe('Where the substitute differs from what was asked for, e.g. `os ubuntu 24.04 → debian 12`'),
  })
  .strict();

export type SubstitutionRecord = z.infer<typeof SubstitutionRecordSchema>;

const LineageSchema = z.array(SubstitutionRecordSchema);

/** The substitutions an image descends from, from its lineage label; anything unreadable is no lineage. */
export function parseLineage(label: string | undefined): SubstitutionRecord[] {
  if (label === undefined) return [];
  try {
    const parsed = LineageSchema.safeParse(JSON.parse(label));
    return parsed.success ? parsed.data : [];
  } catch {
    return [];
  }
}

/** `a → b (os ubuntu 24.04 → debian 12)`; a recipe names its file. */
export function formatSubstitution(s: SubstitutionRecord): string {
  const via = s.via === 'recipe' && s.recipe !== undefined ? ` [recipe ${s.recipe}]` : '';
  const differs = (s.differs ?? []).length > 0 ? ` (≠ ${(s.differs ?? []).join(', ')})` : '';
  return `${s.from} → ${s.to}${via}${differs}`;
}
