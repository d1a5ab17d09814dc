// Reads the Federal Reserve Board's press-release feeds: RSS 1.0 (RDF) with the cb: (central
// bank) extension. Each <item rdf:about=URL> is a sibling of <channel> and carries title, link,
// dc:date (ISO 8601 with an offset) and cb:news > cb:keyword (the Board's category).

export class SourceError extends Error {}

const RSS_NAMESPACE = 'http://purl.org/rss/1.0/';
const RDF_NAMESPACE = 'http://www.w3.org/1999/02/22-rdf-syntax-ns#';
const ENTITIES = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

function decodeXml(text) {
  return text
    .replace(/<!\[CDATA\[([\s\S]*?)\]\]>/g, '$1')
    .replace(/&(#x[0-9a-fA-F]+|#\d+|amp|lt|gt|quot|apos);/g, (whole, name) => {
      if (name[0] !== '#') return ENTITIES[name];
      return String.fromCodePoint(name[1] === 'x' ? parseInt(name.slice(2), 16) : parseInt(name.slice(1), 10));
    });
}

function element(xml, name) {
  const matches = [...xml.matchAll(new RegExp(`<${name}(?:\\s[^>]*)?>([\\s\\S]*?)</${name}>`, 'g'))];
  return matches.length === 1 ? decodeXml(matches[0][1]) : undefined;
}

/** Parses the feed into [{title, link, published, keyword}] in feed order. */
export function parseFeed(text, sourceName) {
  const root = /<rdf:RDF\b([^>]*)>/.exec(text);
  if (!root || !root[1].includes(`xmlns="${RSS_NAMESPACE}"`) || !root[1].includes(`xmlns:rdf="${RDF_NAMESPACE}"`)) {
    throw new SourceError(`${sourceName} is not an RSS 1.0 feed (no rdf:RDF root in the RSS 1.0 namespace)`);
  }
  const items = [];
  for (const match of text.matchAll(/<item\s+rdf:about="([^"]*)"\s*>([\s\S]*?)<\/item>/g)) {
    const body = match[2];
    const where = `${sourceName}: item ${items.length + 1}`;
    const title = element(body, 'title');
    const link = element(body, 'link');
    const published = element(body, 'dc:date');
    const keyword = element(body, 'cb:keyword');
    if (title === undefined || link === undefined || published === undefined) {
      throw new SourceError(`${where} lacks one title, link or dc:date`);
    }
    if (keyword === undefined) throw new SourceError(`${where} has no cb:keyword, so it is not a press release`);
    items.push({ title, link: link.trim(), published: published.trim(), keyword: keyword.trim() });
  }
  if (items.length === 0 && /<item\b/.test(text)) {
    throw new SourceError(`${sourceName}: items are not <item rdf:about="...">`);
  }
  return items;
}
