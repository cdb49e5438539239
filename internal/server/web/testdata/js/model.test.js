import * as m from '/assets/model.js';
import { eq } from './assert.js';

const steps = (...phases) => phases.map((phase, i) => ({ name: `s${i}`, phase }));

export const tests = {
  'the server state picks the wizard step'() {
    const cases = {
      '': 'welcome', New: 'welcome', InfrastructureUpgrading: 'infra', InfrastructureUpgraded: 'infra',
      InfrastructureUpgradeFailed: 'infra', AppPreflightsRunning: 'app-preflights', AppPreflightsFailed: 'app-preflights',
      AppPreflightsSucceeded: 'app-preflights', AppUpgrading: 'app-upgrade', AppUpgradeFailed: 'app-upgrade',
      Succeeded: 'done', SomethingNew: 'welcome',
      HostPreflightsRunning: 'host-preflights', HostPreflightsSucceeded: 'host-preflights', HostPreflightsFailed: 'host-preflights',
      HostPreflightsFailedBypassed: 'host-preflights', HostPreflightsExecutionFailed: 'host-preflights',
      AirgapProcessing: 'airgap', AirgapProcessed: 'airgap', AirgapProcessingFailed: 'airgap',
    };
    for (const [state, step] of Object.entries(cases)) eq(m.stepForState(state), step, state);
    eq(m.STEPS.map((s) => s.id), ['welcome', 'configuration', 'airgap', 'host-preflights', 'infra', 'app-preflights', 'app-upgrade', 'done']);
  },
  'the steps shown are embedded-cluster\'s phase order'() {
    const ids = (flags) => m.phaseOrder(flags).map((s) => s.id);
    eq(ids({ isAirgap: false, requiresInfraUpgrade: true }), ['welcome', 'configuration', 'host-preflights', 'infra', 'app-preflights', 'app-upgrade', 'done']);
    eq(ids({ isAirgap: true, requiresInfraUpgrade: true }), ['welcome', 'configuration', 'airgap', 'host-preflights', 'infra', 'app-preflights', 'app-upgrade', 'done']);
    eq(ids({ isAirgap: false, requiresInfraUpgrade: false }), ['welcome', 'configuration', 'app-preflights', 'app-upgrade', 'done']);
    eq(ids({ isAirgap: true, requiresInfraUpgrade: false }), ['welcome', 'configuration', 'airgap', 'app-preflights', 'app-upgrade', 'done']);
    eq(ids(), ids({ isAirgap: false, requiresInfraUpgrade: true }), 'no flags: an upgrade with hops');
  },
  'the server state says which steps show and where the wizard opens'() {
    // Before a start the hops are not known: the infrastructure steps show.
    eq(m.flagsForState({ state: 'New', requiresInfraUpgrade: false }), { isAirgap: false, requiresInfraUpgrade: true });
    eq(m.flagsForState({ state: 'HostPreflightsFailed', requiresInfraUpgrade: false }), { isAirgap: false, requiresInfraUpgrade: true });
    eq(m.flagsForState({ state: 'AppUpgrading', requiresInfraUpgrade: false }), { isAirgap: false, requiresInfraUpgrade: false });
    eq(m.flagsForState({ state: 'AirgapProcessing' }), { isAirgap: true, requiresInfraUpgrade: true });
    eq(m.flagsForState({ state: 'Succeeded', isAirgap: true, requiresInfraUpgrade: true }), { isAirgap: true, requiresInfraUpgrade: true });
    eq(m.landingStep({ state: 'HostPreflightsFailed' }), 'host-preflights');
    eq(m.landingStep({ state: 'InfrastructureUpgrading', requiresInfraUpgrade: true }), 'infra');
    // An upgrade without a hop: its infrastructure phase is not shown.
    eq(m.landingStep({ state: 'InfrastructureUpgraded', requiresInfraUpgrade: false }), 'app-preflights');
    eq(m.landingStep({ state: 'AirgapProcessed', isAirgap: true }), 'airgap');
    eq(m.landingStep({ state: 'New' }), 'welcome');
  },
  'the infrastructure progress is embedded-cluster\'s: components Succeeded over all'() {
    const comps = (...states) => states.map((state, i) => ({ name: `c${i}`, status: { state } }));
    eq(m.componentProgress({ status: { state: 'Running' }, components: comps('Succeeded', 'Running', 'Pending') }), 33);
    eq(m.componentProgress({ status: { state: 'Running' }, components: comps('Succeeded', 'Succeeded', 'Pending') }), 67);
    eq(m.componentProgress({ status: { state: 'Running' }, components: comps('Succeeded', 'Succeeded', 'Succeeded', 'Succeeded', 'Succeeded', 'Running') }), 83);
    eq(m.componentProgress({ status: { state: 'Failed' }, components: comps('Succeeded', 'Failed') }), 50);
    eq(m.componentProgress({ status: { state: 'Pending' }, components: [] }), 0);
    eq(m.componentProgress({ status: { state: 'Succeeded' }, components: comps('Succeeded', 'Pending') }), 100, 'Succeeded is 100');
    eq(m.componentProgress(null), 0);
    // The runs' steps do not count: it is over components alone.
    eq(m.componentProgress({ status: { state: 'Running' }, components: comps('Succeeded', 'Running'), runs: ['r'] }), 50);
    eq(m.componentProgressText({ status: { state: 'Running', description: 'Upgrading controller\nmore' } }), 'Upgrading controller');
    eq(m.componentProgressText({ status: { state: 'Pending', description: '' } }), 'Preparing installation...');
    eq(m.componentProgressText({}), 'Preparing installation...');
  },
  'the app progress counts the steps of the runs followed'() {
    const status = { status: { state: 'Running' }, components: [{ name: 'a' }, { name: 'b' }] };
    const runs = [{ stages: [{ steps: steps('Succeeded', 'Succeeded', 'Running'), gates: steps('Succeeded') }, { steps: steps('Pending') }] }];
    eq(m.stepProgress(status, runs), 50); // 2 of 4 steps; gates do not count
  },
  'the app progress counts a later run\'s stages as one step each'() {
    const status = { status: { state: 'Running' }, components: [{ name: '1.1.0: a' }, { name: '1.1.0: b' }, { name: '2.0.0: a' }, { name: '2.0.0: b' }] };
    const runs = [{ stages: [{ steps: steps('Succeeded') }, { steps: steps('Succeeded') }] }];
    eq(m.stepProgress(status, runs), 50); // 2 done of 2 + 2 not followed yet
  },
  'the app progress without runs is over components'() {
    const status = { status: { state: 'Running' }, components: [{ status: { state: 'Succeeded' } }, { status: { state: 'Running' } }, { status: { state: 'Pending' } }] };
    eq(m.stepProgress(status, []), 33);
    eq(m.stepProgress({ status: { state: 'Pending' } }, []), 0);
    eq(m.stepProgress({ status: { state: 'Succeeded' } }, []), 100);
  },
  'the app progress after a rollback counts what is done now'() {
    const status = { status: { state: 'Failed' }, components: [{ name: 'a' }] };
    eq(m.stepProgress(status, [{ stages: [{ steps: steps('Succeeded', 'RolledBack', 'Failed') }] }]), 33);
  },
  'the support bundle as the infrastructure phase shows it'() {
    const fmt = (t) => `at ${t}`;
    eq(m.supportBundleInfo(undefined), null);
    eq(m.supportBundleInfo(null), null);
    eq(m.supportBundleInfo({ name: 'infra-bundle.tar.gz', createdAt: '2026-11-24T08:00:00Z', bytes: 20480, files: 12, missing: ['nodes'], error: '' }, fmt),
      { text: 'Support bundle (20 KB, created at 2026-11-24T08:00:00Z)', fileName: 'infra-bundle.tar.gz', files: 12, missing: ['nodes'], error: '' });
    eq(m.supportBundleInfo({ name: 'b.tar.gz', bytes: 300 }).text, 'Support bundle (1 KB)', 'a small bundle is 1 KB');
    eq(m.supportBundleInfo({ name: 'b.tar.gz', bytes: 1600000, createdAt: 'x' }).text, 'Support bundle (1563 KB, created x)');
    // Not written: no link, the error said.
    eq(m.supportBundleInfo({ name: '', bytes: 0, error: 'cannot list pods: forbidden' }),
      { text: '', fileName: 'support-bundle.tar.gz', files: 0, missing: [], error: 'cannot list pods: forbidden' });
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
    eq(m.preflightsBlocked({ output: { fail: [{}] }, allowIgnoreAppPreflights: true }, true, 'host'), true, 'the host\'s own allow');
    eq(m.preflightsBlocked({ output: { fail: [{}] }, allowIgnoreHostPreflights: true }, true, 'host'), false);
  },
  'the host preflights gate the start'() {
    const res = (state, fail, allow) => ({ status: { state }, output: { pass: [{}], warn: [], fail: fail ? [{ title: 'Nodes Ready' }] : [] }, allowIgnoreHostPreflights: allow });
    eq(m.preflightsGate(res('Succeeded', false, false), false, 'host'), { running: false, failed: 0, showIgnore: false, blocking: false, ready: true });
    eq(m.preflightsGate(res('Running', false, false), false, 'host').ready, false);
    eq(m.preflightsGate(null, false, 'host').ready, false, 'not read yet');
    // A failure: Start disabled; with the server's allow, the box enables it.
    eq(m.preflightsGate(res('Failed', true, false), true, 'host'), { running: false, failed: 1, showIgnore: false, blocking: true, ready: false });
    eq(m.preflightsGate(res('Failed', true, true), false, 'host'), { running: false, failed: 1, showIgnore: true, blocking: false, ready: false });
    eq(m.preflightsGate(res('Failed', true, true), true, 'host'), { running: false, failed: 1, showIgnore: true, blocking: false, ready: true });
    // Checks that could not run: failed without a result, run them again.
    eq(m.preflightsGate(res('Failed', false, true), true, 'host').ready, false);
    // The app's allow is not the host's.
    eq(m.preflightsGate({ ...res('Failed', true, false), allowIgnoreAppPreflights: true }, true, 'host').ready, false);
  },
  'changes read as counts and refs'() {
    eq(m.changeCounts([{ action: 'update' }, { action: 'create' }, { action: 'update' }]), '2 update, 1 create');
    eq(m.refText({ kind: 'Deployment', namespace: 'demo', name: 'web' }), 'Deployment demo/web');
    eq(m.refText({ kind: 'CustomResourceDefinition', name: 'x.example.com' }), 'CustomResourceDefinition x.example.com');
  },
};
