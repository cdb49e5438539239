// The infrastructure phase's support bundle (its status's supportBundle,
// written when the phase ends): a download for an admin, fetched with the
// session's token and saved from a blob URL (a plain link cannot send
// the token), and the error when it could not be written.

import { h, text, formatTime, errorBox, setError, saveBlob, announce } from './dom.js';
import { download, upgrade, session } from './api.js';
import { supportBundleInfo } from './model.js';

export function supportBundleView() {
  const admin = session.isAdmin();
  let sig = '';
  let info = null;
  const link = h('a', { href: '#', class: 'button-link', dataset: { testid: 'support-bundle-link' } });
  const detail = h('p', { class: 'help', dataset: { testid: 'support-bundle-detail' } });
  const failed = h('p', { class: 'field-error', hidden: true, dataset: { testid: 'support-bundle-error' } });
  const err = errorBox({ dataset: { testid: 'support-bundle-download-error' } });
  const viewerText = h('p', { dataset: { testid: 'support-bundle-text' } });
  const el = h('section', { class: 'support-bundle', hidden: true, 'aria-labelledby': 'support-bundle-heading', dataset: { testid: 'support-bundle' } },
    h('h3', { id: 'support-bundle-heading' }, 'Support bundle'),
    admin ? link : viewerText, detail, failed, err);

  link.addEventListener('click', async (ev) => {
    ev.preventDefault();
    if (!info || link.getAttribute('aria-disabled') === 'true') return;
    setError(err, null);
    link.setAttribute('aria-disabled', 'true');
    try {
      const { blob, name } = await download(upgrade('infra/support-bundle'), info.fileName);
      saveBlob(blob, name);
      announce(`Support bundle ${name} downloaded`);
    } catch (e) {
      setError(err, e);
    } finally {
      link.removeAttribute('aria-disabled');
    }
  });

  // update shows the status's supportBundle (undefined: none yet).
  function update(sb) {
    const s = JSON.stringify(sb || null);
    if (s === sig) return;
    sig = s;
    info = supportBundleInfo(sb, formatTime);
    el.hidden = !info;
    if (!info) return;
    link.hidden = !info.text;
    text(link, info.text);
    link.setAttribute('download', info.fileName);
    text(viewerText, info.text ? `${info.text}: an admin can download it.` : '');
    const parts = [];
    if (info.files) parts.push(`${info.files} file(s)`);
    if (info.missing.length) parts.push(`not collected: ${info.missing.join(', ')}`);
    text(detail, parts.join('; '));
    detail.hidden = !parts.length;
    failed.hidden = !info.error;
    text(failed, info.error ? `The support bundle could not be written completely: ${info.error}` : '');
  }
  return { el, update };
}
