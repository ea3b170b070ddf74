// Text placed in the operators' HTML pages (status, directory, people): every character that could
// open markup or end an attribute becomes a numeric entity, so names and URLs from the network
// (written by anyone) stay text.
export const esc = (s: string): string => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
