/**
 * A strict little XML reader for the JUnit tests: throws on anything not well-formed (unbalanced
 * tags, raw `<` or `&` in text or attributes, unknown entities, several roots) and returns the tree.
 */
export interface XmlElement {
  name: string;
  attrs: Record<string, string>;
  children: XmlElement[];
  text: string;
}

const ENTITY = /&(amp|lt|gt|quot|apos|#\d+|#x[0-9a-fA-F]+);/g;
const NAME = '[A-Za-z_][\\w.-]*';

function decode(raw: string, where: string): string {
  if (raw.includes('<')) throw new Error(`raw < in ${where}`);
  const stripped = raw.replace(ENTITY, '');
  if (stripped.includes('&')) throw new Error(`bad entity in ${where}: ${raw.slice(0, 60)}`);
  return raw.replace(
    ENTITY,
    (_, e: string) =>
      ({ amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" })[e] ?? String.fromCodePoint(e.startsWith('#x') ? parseInt(e.slice(2), 16) : Number(e.slice(1))),
  );
}

export function parseXml(text: string): XmlElement {
  let i = 0;
  const decl = /^<\?xml[^?]*\?>\s*/.exec(text);
  if (decl) i = decl[0].length;
  const stack: XmlElement[] = [];
  let root: XmlElement | undefined;
  const tagRe = new RegExp(`<(/?)(${NAME})((?:\\s+${NAME}="[^"]*")*)\\s*(/?)>`, 'y');
  while (i < text.length) {
    const lt = text.indexOf('<', i);
    const chunk = text.slice(i, lt < 0 ? text.length : lt);
    if (chunk.trim() !== '') {
      if (stack.length === 0) throw new Error(`text outside the root element: ${chunk.slice(0, 40)}`);
      stack[stack.length - 1]!.text += decode(chunk, 'text');
    }
    if (lt < 0) break;
    tagRe.lastIndex = lt;
    const m = tagRe.exec(text);
    if (!m) throw new Error(`malformed tag at ${lt}: ${text.slice(lt, lt + 60)}`);
    const [, close, name, attrText, selfClose] = m;
    i = tagRe.lastIndex;
    if (close) {
      const open = stack.pop();
      if (!open || open.name !== name) throw new Error(`</${name}> closes <${open?.name}>`);
      continue;
    }
    const attrs: Record<string, string> = {};
    for (const a of attrText!.matchAll(new RegExp(`(${NAME})="([^"]*)"`, 'g'))) {
      if (a[1]! in attrs) throw new Error(`duplicate attribute ${a[1]}`);
      attrs[a[1]!] = decode(a[2]!, `attribute ${a[1]}`);
    }
    const el: XmlElement = { name: name!, attrs, children: [], text: '' };
    if (stack.length > 0) stack[stack.length - 1]!.children.push(el);
    else if (root) throw new Error('more than one root element');
    else root = el;
    if (!selfClose) stack.push(el);
  }
  if (stack.length > 0) throw new Error(`unclosed <${stack[stack.length - 1]!.name}>`);
  if (!root) throw new Error('no root element');
  return root;
}

export function findAll(el: XmlElement, name: string): XmlElement[] {
  return [...(el.name === name ? [el] : []), ...el.children.flatMap((c) => findAll(c, name))];
}
