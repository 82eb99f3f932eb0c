// A small, strict XML reader for DASH manifests (decision 0333): elements, attributes, text,
// comments, CDATA and processing instructions. No DOCTYPE (so no entity can be declared, let
// alone expanded), only the five predefined entities and character references, and bounds on
// size, depth and element count. Nothing here fetches.

export class XmlProblem extends Error {}

export interface XmlElement {
  /** Local name, its namespace prefix dropped (`cenc:pssh` is `pssh`). */
  name: string;
  attributes: Map<string, string>;
  children: XmlElement[];
  /** The element's own text (its direct text and CDATA), trimmed. */
  text: string;
}

export interface XmlBounds {
  maxDepth: number;
  maxElements: number;
}

const ENTITIES: Record<string, string> = { lt: "<", gt: ">", amp: "&", apos: "'", quot: '"' };

function decode(text: string): string {
  return text.replace(/&(#x[0-9a-fA-F]+|#[0-9]+|[a-zA-Z]+);|&/g, (whole, name?: string) => {
    if (name === undefined) throw new XmlProblem("it has a bare & (not XML)");
    if (name.startsWith("#x")) return codePoint(Number.parseInt(name.slice(2), 16));
    if (name.startsWith("#")) return codePoint(Number.parseInt(name.slice(1), 10));
    const value = ENTITIES[name];
    if (value === undefined) throw new XmlProblem(`it names an unknown entity ${whole}`);
    return value;
  });
}

function codePoint(value: number): string {
  if (!(value > 0 && value <= 0x10ffff)) throw new XmlProblem("it has a bad character reference");
  return String.fromCodePoint(value);
}

const localName = (name: string) => name.slice(name.indexOf(":") + 1);

/** Parses a whole document; throws XmlProblem saying why it is not one. */
export function parseXml(text: string, bounds: XmlBounds): XmlElement {
  let at = 0;
  let elements = 0;
  const stack: XmlElement[] = [];
  let root: XmlElement | null = null;
  const source = text.replace(/^\uFEFF/, "");
  const fail = (why: string): never => {
    throw new XmlProblem(`${why} (at character ${at})`);
  };
  while (at < source.length) {
    const open = source.indexOf("<", at);
    const textEnd = open === -1 ? source.length : open;
    if (textEnd > at) {
      const chunk = source.slice(at, textEnd);
      if (stack.length > 0) stack[stack.length - 1].text += decode(chunk);
      else if (chunk.trim() !== "") fail("it has text outside its root element");
    }
    if (open === -1) break;
    at = open;
    if (source.startsWith("<!--", at)) {
      const end = source.indexOf("-->", at + 4);
      if (end === -1) fail("a comment never ends");
      at = end + 3;
    } else if (source.startsWith("<![CDATA[", at)) {
      const end = source.indexOf("]]>", at + 9);
      if (end === -1 || stack.length === 0) fail("a CDATA section is misplaced or never ends");
      stack[stack.length - 1].text += source.slice(at + 9, end);
      at = end + 3;
    } else if (source.startsWith("<?", at)) {
      const end = source.indexOf("?>", at + 2);
      if (end === -1) fail("a processing instruction never ends");
      at = end + 2;
    } else if (source.startsWith("<!", at)) {
      // <!DOCTYPE …> and its internal subset are where entities are declared: refused whole.
      fail("it has a DOCTYPE or declaration, which is not read");
    } else if (source.startsWith("</", at)) {
      const end = source.indexOf(">", at);
      if (end === -1) fail("a closing tag never ends");
      const name = localName(source.slice(at + 2, end).trim());
      const open = stack.pop();
      if (!open || open.name !== name) fail(`</${name}> closes nothing open`);
      at = end + 1;
    } else {
      const match = /^<([A-Za-z_][\w.:-]*)/.exec(source.slice(at, at + 256));
      if (!match) fail("a tag has no name");
      const element: XmlElement = {
        name: localName((match as RegExpExecArray)[1]),
        attributes: new Map(),
        children: [],
        text: "",
      };
      at += (match as RegExpExecArray)[0].length;
      const attribute = /\s*([A-Za-z_][\w.:-]*)\s*=\s*("[^"<]*"|'[^'<]*')|\s*(\/?>)/y;
      let closed: string | null = null;
      while (closed === null) {
        attribute.lastIndex = at;
        const found = attribute.exec(source);
        if (!found) fail(`the <${element.name}> tag is malformed`);
        const hit = found as RegExpExecArray;
        at = attribute.lastIndex;
        if (hit[3]) closed = hit[3];
        else {
          const name = hit[1];
          if (element.attributes.has(name)) fail(`an attribute is repeated: ${name}`);
          element.attributes.set(name, decode(hit[2].slice(1, -1)));
        }
      }
      elements += 1;
      if (elements > bounds.maxElements) {
        throw new XmlProblem(`it has more than ${bounds.maxElements} elements`);
      }
      if (stack.length > 0) stack[stack.length - 1].children.push(element);
      else if (root) fail("it has more than one root element");
      else root = element;
      if (closed === ">") {
        stack.push(element);
        if (stack.length > bounds.maxDepth) {
          throw new XmlProblem(`its elements nest deeper than ${bounds.maxDepth}`);
        }
      }
    }
  }
  if (stack.length > 0) throw new XmlProblem(`<${stack[stack.length - 1].name}> is never closed`);
  if (!root) throw new XmlProblem("it has no root element");
  const trim = (element: XmlElement) => {
    element.text = element.text.trim();
    for (const child of element.children) trim(child);
  };
  trim(root);
  return root;
}
