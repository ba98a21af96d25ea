// html-layout.js: added at the end of a copy of a report page (the pages
// themselves carry no script), it measures the page as the browser laid it
// out and writes what is wrong into <pre id="layout">, one line each, for
// test-html-render.sh to read from the DOM Chromium dumps:
//
// - a picture's label smaller than 11 px on the screen (SVGs scale with
//   the page: 12 user units shown at half size are 6 px);
// - a label cut off by its picture's edge (its box outside the viewBox);
// - a section with nothing in it: a heading followed by no content, or a
//   table whose body has no row;
// - a table with an "operation" or "function" column anywhere but first,
//   where a wide table's scrolling would hide it.
(() => {
  const bad = [];
  const say = (what) => { if (bad.length < 40) bad.push(what); };
  for (const svg of document.querySelectorAll('svg')) {
    const vb = svg.viewBox.baseVal;
    const title = svg.querySelector('title')?.textContent || '?';
    for (const t of svg.querySelectorAll('text')) {
      if (!t.textContent.trim()) continue;
      const px = parseFloat(getComputedStyle(t).fontSize) * (svg.getScreenCTM()?.a || 0);
      if (px < 11) say(`small label: "${t.textContent}" ${px.toFixed(1)} px in "${title}"`);
      // its box in the picture's units, turned as it is drawn (an axis's
      // title stands on its end)
      const b = t.getBBox(), m = svg.getScreenCTM().inverse().multiply(t.getScreenCTM());
      const xs = [], ys = [];
      for (const [x, y] of [[b.x, b.y], [b.x + b.width, b.y], [b.x, b.y + b.height],
                            [b.x + b.width, b.y + b.height]]) {
        const p = new DOMPoint(x, y).matrixTransform(m);
        xs.push(p.x);
        ys.push(p.y);
      }
      const [x0, x1, y0, y1] = [Math.min(...xs), Math.max(...xs), Math.min(...ys), Math.max(...ys)];
      if (vb && vb.width && (x0 < vb.x - 0.5 || x1 > vb.x + vb.width + 0.5 ||
                             y0 < vb.y - 0.5 || y1 > vb.y + vb.height + 0.5))
        say(`clipped label: "${t.textContent}" at ${x0.toFixed(0)}..${x1.toFixed(0)}, ` +
            `${y0.toFixed(0)}..${y1.toFixed(0)} of ${vb.width} x ${vb.height} in "${title}"`);
    }
  }
  for (const h of document.querySelectorAll('h2')) {
    const next = h.nextElementSibling;
    if (!next || next.tagName === 'H2') say(`empty section: "${h.textContent}"`);
  }
  for (const table of document.querySelectorAll('table')) {
    const h2 = table.closest('.tw')?.previousElementSibling?.textContent || '';
    if (!table.querySelector('tbody tr')) say(`empty table after "${h2}"`);
    const heads = [...table.querySelectorAll('thead th')].map((th) => th.textContent);
    const name = heads.findIndex((x) => x === 'operation' || x === 'function');
    if (name > 0 && heads.filter((x) => x === 'operation' || x === 'function').length === 1 &&
        table.querySelectorAll('thead th.l').length === 1)
      say(`"${heads[name]}" is column ${name + 1} of ${heads.length} after "${h2}"`);
  }
  const pre = document.createElement('pre');
  pre.id = 'layout';
  pre.textContent = bad.length ? bad.join('\n') : 'ok';
  document.body.append(pre);
})();
