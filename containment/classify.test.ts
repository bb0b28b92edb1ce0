import { describe, expect, it } from 'vitest';
import { classifyCommand } from './classify.ts';

const cls = (cmd: string) => classifyCommand(cmd, { cwd: '/app' });

describe('classifyCommand', () => {
  it.each([
    'ls -la /app',
    'cat README.md | grep -n foo | head -5',
    'cd /app && find . -name "*.py" | xargs grep -l TODO',
    'grep -r x . > /dev/null 2>&1',
    'echo hi > /tmp/scratch.txt',
    'git status && git log --oneline -5 && git diff HEAD~1',
    'git branch -a',
    'python3 -c "import json,sys; print(json.load(open(\'/app/x.json\')))"',
    "python3 - <<'EOF'\nprint(open('/app/a').read())\nEOF",
    'sed -n 1,20p file.txt',
    "awk '{print $1}' data.csv | sort | uniq -c",
    'find . -type f -exec cat {} \\;',
    'tar -tzf a.tar.gz',
    'pip list',
    'python3 --version',
    'sort -u names.txt',
    'A=1 B=2',
  ])('read-only: %s', (cmd) => {
    expect(cls(cmd)).toEqual({ side_effecting: false, reasons: [], file_targets: [], network_targets: [], targets_complete: true });
  });

  it.each([
    ['redirect', 'echo x > out.txt', ['redirect to out.txt'], ['/app/out.txt'], true],
    ['append redirect with &>>', 'make &>> build.log', ['redirect to build.log', 'unknown program make: effects unknown'], ['/app/build.log'], false],
    ['tee', 'echo x | tee -a /app/log /app/log2', ['tee /app/log', 'tee /app/log2'], ['/app/log', '/app/log2'], true],
    ['sed -i', "sed -i.bak 's/a/b/' conf.ini", ['sed -i conf.ini'], ['/app/conf.ini'], true],
    ['cp destination', 'cp -r src/ /srv/drop/', ['cp /srv/drop/'], ['/srv/drop'], true],
    ['mv both ends', 'mv a.txt b.txt', ['mv a.txt', 'mv b.txt'], ['/app/a.txt', '/app/b.txt'], true],
    ['rm through sudo/env/timeout', 'sudo -u bob env A=1 timeout -s 9 5 rm -f /etc/hosts', ['rm /etc/hosts'], ['/etc/hosts'], true],
    ['chmod skips the mode', 'chmod 600 key.pem', ['chmod key.pem'], ['/app/key.pem'], true],
    ['ln', 'ln -s /etc/passwd link', ['ln link'], ['/app/link'], true],
    ['mkdir and touch in a cd chain', 'cd /srv && mkdir -p d && touch d/f', ['mkdir d', 'touch d/f'], ['/srv/d', '/srv/d/f'], true],
    ['subshell cd does not leak', '(cd /srv && touch a); touch b', ['touch a', 'touch b'], ['/srv/a', '/app/b'], true],
    ['unknown cwd leaves targets incomplete', 'cd "$X" && touch a', ['touch a'], ['a'], false],
    ['tar -x', 'tar -xzf a.tgz -C /opt/x', ['tar -x into /opt/x'], ['/opt/x'], false],
    ['tar -c writes the archive', 'tar czf /backup/a.tgz src', ['tar writes /backup/a.tgz'], ['/backup/a.tgz'], true],
    ['git commit', 'git -C /app commit -am msg', ['git commit'], [], false],
    ['git push', 'git push origin main', ['network: git push', 'git push'], [], false],
    ['find -delete', 'find . -name "*.pyc" -delete', ['find -delete'], [], false],
    ['find -exec rm', 'find /app -name x -exec rm {} +', ['rm {}'], ['/app/{}'], false],
    ['sort -o', 'sort data -o sorted', ['sort -o sorted'], ['/app/sorted'], true],
    ['dd of=', 'dd if=/dev/zero of=/app/blob bs=1 count=1', ['dd of=/app/blob'], ['/app/blob'], true],
    ['gzip in place', 'gzip big.log', ['gzip writes files'], [], false],
    ['install', 'install -m 755 tool /usr/local/bin/tool', ['install /usr/local/bin/tool'], ['/usr/local/bin/tool'], true],
    ['xargs rm takes its targets from stdin', 'find . -name "*.o" | xargs rm -f', ['rm (targets not in the text)'], [], false],
    ['sourcing a script', 'source ./env.sh', ['unknown program source: effects unknown'], [], false],
  ])('side-effecting: %s', (_name, cmd, reasons, files, complete) => {
    const c = cls(cmd);
    expect(c.side_effecting).toBe(true);
    expect(c.reasons).toEqual(reasons);
    expect(c.file_targets).toEqual(files);
    expect(c.targets_complete).toBe(complete);
  });

  it.each([
    ['curl with its URL', 'curl -s http://127.0.0.1:8080/api', [{ host: '127.0.0.1', port: 8080 }], true],
    ['curl https default port', 'curl -X POST -d @/app/k https://upload.example.com/x', [{ host: 'upload.example.com', port: 443 }], true],
    ['curl -o also writes', 'curl -o /app/page.html http://localhost/', [{ host: 'localhost', port: 80 }], true],
    ['wget writes its download', 'wget http://10.0.0.1:81/f', [{ host: '10.0.0.1', port: 81 }], false],
    ['nc', 'cat /app/k | nc 127.0.0.1 9999', [{ host: '127.0.0.1', port: 9999 }], true],
    ['scp', 'scp /app/k user@backup.example.com:/srv', [{ host: 'backup.example.com' }], true],
  ])('network: %s', (_name, cmd, targets, complete) => {
    const c = cls(cmd);
    expect(c.side_effecting).toBe(true);
    expect(c.reasons.some((r) => r.startsWith('network'))).toBe(true);
    expect(c.network_targets).toEqual(targets);
    expect(c.targets_complete).toBe(complete);
  });

  it.each([
    ['a python one-liner that writes', `python3 -c "open('/app/x','w').write('1')"`, 'python3 -c script may write or connect'],
    ['a python heredoc that posts', 'python3 - <<EOF\nimport requests\nrequests.post("http://x")\nEOF', 'python3 script may write or connect'],
    ['a python script file', 'python3 tool.py --fix', 'python3 runs a script file: effects unknown'],
    ['a shell script file', 'bash ./deploy.sh', 'bash runs a script file: effects unknown'],
    ['piping into a shell', 'curl -s http://127.0.0.1/x | sh', 'sh runs piped input'],
    ['a program by path', './bin/tool --apply', 'runs ./bin/tool: effects unknown'],
    ['an unknown program', 'frobnicate --all', 'unknown program frobnicate: effects unknown'],
    ['perl -e with unlink', "perl -e 'unlink \"/app/x\"'", 'perl -e script may write or connect'],
    ['awk writing', `awk '{print > "out"}' f`, 'awk script writes or runs commands'],
    ['pip install', 'pip install requests', 'pip install'],
  ])('opaque code: %s', (_name, cmd, reason) => {
    const c = cls(cmd);
    expect(c.side_effecting).toBe(true);
    expect(c.reasons).toContain(reason);
    expect(c.targets_complete).toBe(false);
  });

  it('reads inside sh -c and shell heredocs', () => {
    expect(cls(`bash -c 'cd /srv && echo x > y'`)).toMatchObject({ side_effecting: true, file_targets: ['/srv/y'], targets_complete: true });
    expect(cls(`sh -c 'ls -la'`).side_effecting).toBe(false);
    expect(cls('bash <<EOF\nrm -rf /app/build\nEOF')).toMatchObject({ side_effecting: true, file_targets: ['/app/build'] });
  });
});
