/**
 * The alternative measured against MiniSearch: Orama over the same documents (the daemon's toolDocument)
 * with the same field weights, and its own tokenizer (no stemming) and typo tolerance (1 edit).
 */
import { create, insertMultiple, search } from "@orama/orama";

export async function oramaRanker(entries, toolDocument, weights) {
  const db = create({
    schema: { server_id: "string", name: "string", server: "string", title: "string", description: "string", params: "string" },
  });
  const docs = entries.map((e) => {
    const { id, ...fields } = toolDocument(e.exposed, e.server, e.item);
    return { id, server_id: e.server, ...fields };
  });
  await insertMultiple(db, docs);
  return {
    db,
    search(query, { limit, server }) {
      const r = search(db, {
        term: query,
        properties: ["name", "server", "title", "description", "params"],
        boost: weights,
        tolerance: 1,
        limit,
        ...(server ? { where: { server_id: server } } : {}),
      });
      return r.hits.map((h) => ({ exposed: h.id, score: h.score }));
    },
  };
}
