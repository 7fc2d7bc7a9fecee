// Package datasets provides the tasks cells train on, each with a content
// digest that enters the cell key.
//
// Data model: the quadratic task of spec/algorithms.md, a synthetic
// heterogeneous objective with a known optimum: worker i minimises
// f_i(x) = 0.5 sum_j a_ij (x_j - b_ij)^2 and the global objective is their
// mean. Loaders for image and text data sets come next.
package datasets
