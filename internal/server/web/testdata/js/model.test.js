import * as m from '/assets/model.js';
import { eq } from './assert.js';

const steps = (...phases) => phases.map((phase, i) => ({ name: `s${i}`, phase }));

export const tests = {
  'the server state picks the wizard step'() {
    const cases = {
      '': 'welcome', New: 'welcome', InfrastructureUpgrading: 'infra', InfrastructureUpgraded: 'infra',
      InfrastructureUpgradeFailed: 'infra', AppPreflightsRunning: 'app-preflights', AppPreflightsFailed: 'app-preflights',
      AppPreflightsSucceeded: 'app-preflights', AppUpgrading: 'app-upgrade', AppUpgradeFailed: 'app-upgrade',
      Succeeded: 'done', SomethingNew: 'welcome', HostPreflightsFailed: 'infra', HostPreflightsFailedBypassed: 'infra',
    };
    for (const [state, step] of Object.entries(cases)) eq(m.stepForState(state), step, state);
    eq(m.STEPS.map((s) => s.id), ['welcome', 'configuration', 'infra', 'app-preflights', 'app-upgrade', 'done']);
  },
  'progress counts the steps of the runs followed'() {
    const status = { status: { state: 'Running' }, components: [{ name: 'a' }, { name: 'b' }] };
    const runs = [{ stages: [{ steps: steps('Succeeded', 'Succeeded', 'Running'), gates: steps('Succeeded') }, { steps: steps('Pending') }] }];
    eq(m.progress(status, runs), 50); // 2 of 4 steps; gates do not count
  },
  'progress counts a later hop\'s stages as one step each'() {
    const status = { status: { state: 'Running' }, components: [{ name: '1.1.0: a' }, { name: '1.1.0: b' }, { name: '2.0.0: a' }, { name: '2.0.0: b' }] };
    const runs = [{ stages: [{ steps: steps('Succeeded') }, { steps: steps('Succeeded') }] }];
    eq(m.progress(status, runs), 50); // 2 done of 2 + 2 not followed yet
  },
  'progress without runs is embedded-cluster\'s, over components'() {
    const status = { status: { state: 'Running' }, components: [{ status: { state: 'Succeeded' } }, { status: { state: 'Running' } }, { status: { state: 'Pending' } }] };
    eq(m.progress(status, []), 33);
    eq(m.progress({ status: { state: 'Pending' } }, []), 0);
    eq(m.progress({ status: { state: 'Succeeded' } }, []), 100);
  },
  'progress after a rollback counts what is done now'() {
    const status = { status: { state: 'Failed' }, components: [{ name: 'a' }] };
    eq(m.progress(status, [{ stages: [{ steps: steps('Succeeded', 'RolledBack', 'Failed') }] }]), 33);
  },
  'the actions that apply to a run'() {
    eq(m.actionsFor({ phase: 'Running', waiting: { step: 'go' } }, 'admin'), ['approve', 'abort']);
    eq(m.actionsFor({ phase: 'Running', waiting: null }, 'admin'), ['abort']);
    eq(m.actionsFor({ phase: 'Failed' }, 'admin'), ['rollback', 'retry']);
    eq(m.actionsFor({ phase: 'Aborted' }, 'admin'), ['rollback']);
    eq(m.actionsFor({ phase: 'RolledBack' }, 'admin'), ['retry']);
    eq(m.actionsFor({ phase: 'Succeeded' }, 'admin'), []);
    eq(m.actionsFor({ phase: 'RollbackFailed' }, 'admin'), []);
    eq(m.actionsFor({ phase: 'Failed' }, 'viewer'), []);
    eq(m.actionsFor({ phase: 'Running', waiting: { step: 'go' } }, 'viewer'), []);
  },
  'what a message says beyond the failure'() {
    eq(m.laterMessage('boom\nlast log lines', 'boom; rolled back app; restore verified\nlast log lines'), 'rolled back app; restore verified');
    eq(m.laterMessage('boom\nlast log lines', 'boom\nlast log lines; rolled back app; restore verified'), 'rolled back app; restore verified');
    eq(m.laterMessage('boom\nlast log lines', 'other\nlast log lines'), 'other\nlast log lines');
    eq(m.laterMessage('boom', 'boom'), '');
    eq(m.laterMessage('boom', ''), '');
    eq(m.laterMessage('boom', 'retrying'), 'retrying');
    eq(m.laterMessage('', 'waiting for approval'), 'waiting for approval');
  },
  'durations'() {
    eq(m.formatDuration(0), '0s');
    eq(m.formatDuration(65), '1m 05s');
    eq(m.formatDuration(3725), '1h 02m 05s');
    eq(m.formatDuration(null), '');
    eq(m.elapsedSeconds('2026-11-24T08:00:00.123456Z', '2026-11-24T08:01:10.123456Z'), 70);
    eq(m.elapsedSeconds('2026-11-24T08:00:00Z', null, Date.parse('2026-11-24T08:00:05Z')), 5);
    eq(m.elapsedSeconds(null, null), null);
    eq(m.runDuration({ durationSeconds: 12 }), 12);
    eq(m.runDuration({ startedAt: '2026-11-24T08:00:00Z', finishedAt: '2026-11-24T08:00:30Z' }), 30);
  },
  'phases read as words and sort into badges'() {
    eq(m.humanize('RollingBack'), 'Rolling back');
    eq(m.humanize('Succeeded'), 'Succeeded');
    eq(['Succeeded', 'Failed', 'RollbackFailed', 'Running', 'Gating', 'Warned', 'RolledBack', 'Pending', undefined].map(m.phaseClass),
      ['ok', 'fail', 'fail', 'active', 'active', 'warn', 'muted', 'pending', 'pending']);
  },
  'events and run answers read alike'() {
    const stages = [{ name: 'crds', phase: 'Running' }];
    eq(m.runEvent({ summary: { phase: 'Running' }, stages }), { summary: { phase: 'Running' }, stages, checks: undefined });
    eq(m.runEvent({ summary: { phase: 'Failed' }, run: { status: { stages, checks: [] } } }).stages, stages);
    eq(m.runEvent('text'), {});
  },
  'values rows'() {
    eq(m.parseValues([['a', '1'], ['', ''], [' b ', 'x=y']]), { a: '1', b: 'x=y' });
    let err = null;
    try { m.parseValues([['a', '1'], ['a', '2']]); } catch (e) { err = e; }
    eq(err?.field, 'values.a');
    err = null;
    try { m.parseValues([['', 'v']]); } catch (e) { err = e; }
    eq(err?.field, 'values');
  },
  'preflights block on failures unless allowed and ignored'() {
    eq(m.preflightsBlocked({ output: { fail: [], warn: [{}] } }, false), false);
    eq(m.preflightsBlocked({ output: { fail: [{}] }, allowIgnoreAppPreflights: true }, false), true);
    eq(m.preflightsBlocked({ output: { fail: [{}] }, allowIgnoreAppPreflights: true }, true), false);
    eq(m.preflightsBlocked({ output: { fail: [{}] }, allowIgnoreAppPreflights: false }, true), true);
  },
  'changes read as counts and refs'() {
    eq(m.changeCounts([{ action: 'update' }, { action: 'create' }, { action: 'update' }]), '2 update, 1 create');
    eq(m.refText({ kind: 'Deployment', namespace: 'demo', name: 'web' }), 'Deployment demo/web');
    eq(m.refText({ kind: 'CustomResourceDefinition', name: 'x.example.com' }), 'CustomResourceDefinition x.example.com');
  },
};
