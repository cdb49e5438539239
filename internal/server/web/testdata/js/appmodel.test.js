import * as m from '/assets/appmodel.js';
import { eq, ok } from './assert.js';

export const tests = {
  'a measurement\'s number is its first'() {
    eq(m.measuredNumber('0.02'), 0.02);
    eq(m.measuredNumber('[0.01 0.03]'), 0.01);
    eq(m.measuredNumber('{"rate": -1.5e-3}'), -0.0015);
    eq(m.measuredNumber(''), null);
    eq(m.measuredNumber('NaN'), null);
    eq(m.measuredNumber(undefined), null);
  },
  'a threshold only from a simple comparison'() {
    eq(m.threshold('result[0] < 0.05'), 0.05);
    eq(m.threshold(' result >= 10 '), 10);
    eq(m.threshold('result[0] < 0.05 && result[1] > 1'), null);
    eq(m.threshold('len(result) == 0'), null);
    eq(m.threshold(''), null);
  },
  'the chart scales to the values, zero and the thresholds'() {
    const metric = {
      name: 'error-rate', successCondition: 'result[0] < 0.05', failureCondition: 'result[0] > 0.2',
      measurements: [{ value: '0.01', phase: 'Successful' }, { value: '', phase: 'Error' }, { value: '[0.5]', phase: 'Failed' }],
    };
    const c = m.chart(metric, { width: 100, height: 50, pad: 5 });
    eq([c.lo, c.hi], [0, 0.5]);
    eq(c.points.map((p) => p.x), [5, 50, 95]);
    eq(c.points[2].y, 5, 'the highest value at the top');
    eq(c.points[1].y, 45, 'a measurement without a number on the bottom line');
    eq(c.lines.map((l) => l.kind), ['success', 'failure']);
    ok(c.lines[0].y > c.lines[1].y, 'the success threshold under the failure one');
    eq(m.chart({ measurements: [{ value: '3', phase: 'Successful' }] }, { width: 100 }).points[0].x, 50, 'one point in the middle');
    eq(m.chart({ measurements: [] }).points, []);
  },
  'the chart says what it shows'() {
    eq(m.chartSummary({ name: 'x', count: 30, measurements: [{ value: '0.5', phase: 'Failed' }] }),
      'x: 1 measurements shown of 30; the last 0.5 (Failed)');
    eq(m.chartSummary({ name: 'x', measurements: [] }), 'x: no measurement yet');
  },
  'rollout phases as badges'() {
    eq(['Healthy', 'Failed', 'Deploying', 'RolledBack', 'Inconclusive', ''].map(m.appPhaseClass), ['ok', 'fail', 'active', 'muted', 'warn', 'pending']);
    eq(m.appPath('a b', 'c/d'), '/api/apps/a%20b/c%2Fd');
    eq(m.requestLabel('abort'), 'Abort and roll back');
  },
};
