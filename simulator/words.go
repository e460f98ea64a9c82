package simulator

// words are what the simulator "generates", one per output token. Each,
// with the leading space it is sent with, is a single GPT-2 token, so a
// tokenizer on the client side counts the same tokens the usage reports.
var words = [...]string{
	"the", "of", "and", "to", "in", "is", "that", "for", "it", "as",
	"was", "with", "be", "by", "on", "not", "he", "this", "are", "or",
	"his", "from", "at", "which", "but", "have", "an", "had", "they", "you",
	"were", "their", "one", "all", "we", "can", "her", "has", "there", "been",
	"if", "more", "when", "will", "would", "who", "so", "no",
}
